#!/bin/bash
# Runs a test binary on NP ranks under valgrind (memcheck): any invalid access or definite leak fails the test.
# Open MPI's own one-time allocations and uninitialised-byte writes are suppressed (valgrind.supp); nothing in
# Sluice is.
#
# Usage: valgrind_test.sh MPI_RUNNER NP SUPPRESSIONS BINARY [ARGS...]
set -euo pipefail

if [[ $# -lt 4 ]]; then
  echo "usage: $0 MPI_RUNNER NP SUPPRESSIONS BINARY [ARGS...]" >&2
  exit 2
fi
runner="$1" ranks="$2" suppressions="$3" binary="$4"
shift 4
# --num-callers and --keep-debuginfo let stacks reach MPI_Init even through plugins unloaded at exit.
# One OpenBLAS thread: its thread pool's start-up allocations are noise, and the test computes nothing big.
export OPENBLAS_NUM_THREADS=1
exec bash "$runner" "$ranks" /usr/bin/valgrind --error-exitcode=1 --leak-check=full --show-leak-kinds=definite \
  --errors-for-leak-kinds=definite --track-origins=no --num-callers=50 --keep-debuginfo=yes --suppressions="$suppressions" "$binary" "$@"
