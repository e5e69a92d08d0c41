#!/usr/bin/env bash
# Compiles fortran_generics_compile.f90 (every public generic with int32/int64 counts and real32/real64 arrays of
# rank 2-5) against the module as built (//capi:fortran_module) with -Wall -Wextra -Werror. Nothing is run: a kind
# the module does not take is a compile error, as `sluice_train_submitted(t, loss, batch=32)` was (issue 26).
set -uo pipefail
module_dir="$(dirname "$1")" program="$2"
out="${TEST_TMPDIR:-$(mktemp -d)}"
# The module uses mpi_f08, so the program is compiled with Open MPI's wrapper like the module (capi/BUILD).
if mpifort -c -std=f2018 -Wall -Wextra -Werror -I "$module_dir" -J "$out" -o "$out/generics.o" "$program"; then
  echo "PASS: every public generic compiled with int32/int64 counts and real32/real64 arrays of rank 2-5"
else
  echo "FAIL: a public generic does not take one of the kinds (above)"
  exit 1
fi
