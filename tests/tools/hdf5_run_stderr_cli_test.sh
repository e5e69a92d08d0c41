#!/bin/bash
# A `sluice train` run on HDF5 data leaves no HDF5-DIAG blocks on stderr (issue 14: "not a dataset ID" when the
# data source's handles were closed after MPI_Finalize, which terminates parallel HDF5). Checked with 1 and 4
# ranks, with and without checkpoints (saving silences HDF5's printing, which would hide the problem), and on the
# error paths that build the data source and then fail.
# Usage: hdf5_run_stderr_cli_test.sh SLUICE MAKE_HDF5_DATA CONFIG
set -u
SLUICE="$1"
MAKE_HDF5="$2"
CONFIG="$3"
source "$(dirname "$0")/cli_test_env.sh"

"$MAKE_HDF5" "$work/data.h5" 256 32 8 || fail "could not make the HDF5 file"

# check NP WANT_CODE ARGS...: the run exits WANT_CODE and its stderr has no HDF5-DIAG.
check() {
  local np="$1" want="$2"
  shift 2
  timeout 120 mpirun --allow-run-as-root --oversubscribe -np "$np" --mca btl self,vader "$SLUICE" train "$CONFIG" \
    --set data.type=hdf5 --set data.path="$work/data.h5" "$@" >"$work/out" 2>"$work/err"
  local code=$?
  [ "$code" -eq "$want" ] || fail "np $np $* exited $code (want $want): $(cat "$work/out" "$work/err")"
  grep -q "HDF5-DIAG" "$work/err" && fail "np $np $*: HDF5-DIAG on stderr: $(head -20 "$work/err")"
}

check 1 0 --set pipeline.stages=1 --set steps=3
check 4 0 --set steps=3
check 4 0 --set steps=3 --set checkpoint.dir="$work/ckpt" --set checkpoint.every=1
check 4 0 --set steps=5 --set checkpoint.dir="$work/ckpt" --auto-resume
# The source is open when these fail: resuming a file that is not a checkpoint, an unwritable trace at the end.
check 2 1 --set pipeline.stages=2 --set steps=3 --resume "$work/data.h5"
check 1 1 --set pipeline.stages=1 --set steps=3 --trace /nonexistent/dir/trace.json
finish "HDF5 stderr"
