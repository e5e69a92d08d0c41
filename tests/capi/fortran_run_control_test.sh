#!/bin/bash
# Builds fortran_run_control.f90 OUTSIDE Bazel against the installed tree (as a user would: gfortran +
# pkg-config sluice-fortran), runs it on 2 ranks with SLUICE_TEST_DIR set to an empty checkpoint directory and
# checks that it passed -- a rank left waiting in a collective would hang, so the run is bounded by `timeout`.
#
# Usage: fortran_run_control_test.sh INSTALL_SH TARBALL MPI_RUNNER PROGRAM_F90
set -euo pipefail

if [[ $# -ne 4 ]]; then
  echo "usage: $0 INSTALL_SH TARBALL MPI_RUNNER PROGRAM_F90" >&2
  exit 2
fi
install_sh="$1" tarball="$2" runner="$3" source="$4"
readonly hang_limit_s=60

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

work="$(mktemp -d "${TEST_TMPDIR:-/tmp}/fortran_run_control.XXXXXX")"
prefix="$work/prefix"
bash "$install_sh" "$tarball" "$prefix"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
program="$work/fortran_run_control"
# shellcheck disable=SC2046  # pkg-config output is a list of flags
gfortran -O2 -std=f2018 -Wall -J "$work" $(pkg-config --cflags sluice-fortran) -o "$program" "$source" \
  $(pkg-config --libs sluice-fortran) || fail "the test program did not build against the installed tree"

export SLUICE_TEST_DIR="$work/checkpoints"
output="$work/output.txt"
status=0
timeout "$hang_limit_s" bash "$runner" 2 "$program" > "$output" 2>&1 || status=$?
cat "$output"
if [[ $status -eq 124 ]]; then
  fail "no result after ${hang_limit_s} s: a rank is waiting in a collective"
fi
[[ $status -eq 0 ]] || fail "the program exited with status $status (see the FAIL lines above)"
grep -q '^PASS: stopped together, checkpointed and resumed' "$output" || fail "the program did not report PASS"
echo "PASS"
