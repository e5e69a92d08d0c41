#!/bin/bash
# The inference-only model in a process without MPI: `sluice train` (4 ranks, 4 stages) writes a checkpoint, then
# model_without_mpi (never calls MPI_Init) loads it twice and predicts from two threads (model_without_mpi.cc).
# Usage: model_without_mpi_test.sh SLUICE MODEL_WITHOUT_MPI CONFIG
set -u
SLUICE="$1"
PROGRAM="$2"
CONFIG="$3"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# A private work directory that also holds Open MPI's session files (concurrent mpiruns under Bazel collide).
work="$(mktemp -d /tmp/sl-model.XXXXXX)"
trap 'rm -rf "$work"' EXIT
export TMPDIR="$work" OMPI_MCA_orte_tmpdir_base="$work" OMPI_MCA_btl_vader_backing_directory="$work"
export OPENBLAS_NUM_THREADS=1

timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 --mca btl self,vader "$SLUICE" train "$CONFIG" \
  --set steps=2 --set checkpoint.dir="$work/ck" --set checkpoint.every=2 >"$work/train.log" 2>&1 ||
  fail "training run: $(cat "$work/train.log")"
ls "$work"/ck/ckpt_*.h5 >/dev/null 2>&1 || fail "no checkpoint written"
# Not under mpirun, and with no Open MPI environment a singleton MPI_Init would pick up.
env -u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_SIZE timeout 120 "$PROGRAM" "$work/ck" >"$work/model.log" 2>&1 ||
  fail "model without MPI: $(cat "$work/model.log")"
[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all model-without-MPI checks passed"
