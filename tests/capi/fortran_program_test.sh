#!/bin/bash
# Builds a Fortran test program OUTSIDE Bazel against the installed tree (as a user would: gfortran +
# pkg-config sluice-fortran), runs it on 2 ranks with SLUICE_TEST_DIR set to an empty directory of its own, and
# checks that it printed its PASS line. A rank left waiting in a collective would hang, so the run is bounded by
# `timeout` and a timeout is reported as the hang it is.
#
# CHECKS_F90 (fortran_checks.f90: FAIL lines, the verdict of all ranks) is compiled first, in the same command.
#
# FFLAGS (optional): extra gfortran flags for this program (e.g. -fopenmp).
#
# Usage: fortran_program_test.sh INSTALL_SH TARBALL MPI_RUNNER CHECKS_F90 PROGRAM_F90 PASS_LINE [FFLAGS]
set -euo pipefail

if [[ $# -ne 6 && $# -ne 7 ]]; then
  echo "usage: $0 INSTALL_SH TARBALL MPI_RUNNER CHECKS_F90 PROGRAM_F90 PASS_LINE [FFLAGS]" >&2
  exit 2
fi
install_sh="$1" tarball="$2" runner="$3" checks="$4" source="$5" pass_line="$6" fflags="${7:-}"
readonly hang_limit_s=60

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

name="$(basename "$source" .f90)"
work="$(mktemp -d "${TEST_TMPDIR:-/tmp}/$name.XXXXXX")"
prefix="$work/prefix"
bash "$install_sh" "$tarball" "$prefix"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
program="$work/$name"
# shellcheck disable=SC2046,SC2086  # pkg-config output and FFLAGS are lists of flags
gfortran -O2 -std=f2018 -Wall $fflags -J "$work" $(pkg-config --cflags sluice-fortran) -o "$program" "$checks" "$source" \
  $(pkg-config --libs sluice-fortran) || fail "the test program did not build against the installed tree"

export SLUICE_TEST_DIR="$work/checkpoints"
output="$work/output.txt"
status=0
timeout "$hang_limit_s" bash "$runner" 2 "$program" > "$output" 2>&1 || status=$?
cat "$output"
if [[ $status -eq 124 ]]; then
  fail "no result after ${hang_limit_s} s: a rank is waiting in a collective another rank never joined"
fi
[[ $status -eq 0 ]] || fail "the program exited with status $status (see the FAIL lines above)"
grep -qF -- "$pass_line" "$output" || fail "the program did not report '$pass_line'"
echo "PASS"
