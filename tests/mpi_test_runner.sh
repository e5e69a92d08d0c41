#!/bin/bash
# Runs one MPI test binary under mpirun with a private temp directory.
#
# Usage: mpi_test_runner.sh NP BINARY [ARGS...]
#   e.g. tests/mpi_test_runner.sh 2 bazel-bin/tests/checkpoint/save_read_test --gtest_filter='*RoundTrip*'
# In Bazel use the mpi_test() macro from //tests:mpi_test.bzl, which wraps this script in an sh_test.
#
# Why: Bazel runs tests concurrently, and every sandboxed mpirun gets the same pid, hence the same Open MPI session
# directory; concurrent runs then fail with "getting local rank failed", PMIx dstore errors or hangs. A fresh, short
# (Unix socket paths are limited to 108 bytes) temp dir per run, used for TMPDIR, the ORTE session directory and
# the shared-memory (vader) backing files, keeps runs apart.
set -euo pipefail

if [[ $# -lt 2 || ! "$1" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 NP BINARY [ARGS...]  (NP: number of ranks, a positive integer)" >&2
  exit 2
fi
ranks="$1"
binary="$2"
shift 2
if [[ ! -x "$binary" ]]; then
  echo "$0: test binary '$binary' does not exist or is not executable" >&2
  exit 2
fi

private_tmp="$(mktemp -d /tmp/sl.XXXXXX)"
trap 'rm -rf "$private_tmp"' EXIT
export TMPDIR="$private_tmp"
export OMPI_MCA_orte_tmpdir_base="$private_tmp"
export OMPI_MCA_btl_vader_backing_directory="$private_tmp"

# SLUICE_MPI_FLAVOR (set by --config=mpich in .bazelrc): which MPI the binary was built against, hence which
# launcher starts it; a binary must be launched by its own MPI's mpiexec.
case "${SLUICE_MPI_FLAVOR:-openmpi}" in
  openmpi)
    # Tests run as root in containers and may ask for more ranks than cores (2 here); shared memory is the only
    # transport a single-node test needs.
    mpirun --allow-run-as-root --oversubscribe -np "$ranks" --mca btl self,vader "$binary" "$@"
    ;;
  mpich)
    # Hydra's fork launcher: every rank on this machine, no ssh; MPICH runs as root and oversubscribes as is.
    mpiexec.mpich -launcher fork -n "$ranks" "$binary" "$@"
    ;;
  *)
    echo "$0: SLUICE_MPI_FLAVOR must be openmpi or mpich, got '${SLUICE_MPI_FLAVOR}'" >&2
    exit 2
    ;;
esac
