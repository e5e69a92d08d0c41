#!/bin/bash
# `sluice train` with sizes whose products overflow (issue 14): they used to die with SIGSEGV (rows × features
# wrapped) or a bare std::bad_alloc. Each must now exit 1 with a message naming the key, and never by a signal.
# Usage: train_sizes_cli_test.sh SLUICE CONFIG
set -u
SLUICE="$1"
CONFIG="$2"
source "$(dirname "$0")/cli_test_env.sh"

# expect_error "MESSAGE FRAGMENT" --set ... : one rank, a time limit, exit status 1, the fragment in the output.
expect_error() {
  local fragment="$1"
  shift
  out="$(timeout 120 mpirun --allow-run-as-root -np 1 --mca btl self,vader "$SLUICE" train "$CONFIG" \
    --set pipeline.stages=1 "$@" 2>&1)"
  code=$?
  [ "$code" -eq 1 ] || fail "$* exited $code (want 1): $out"
  echo "$out" | grep -qF -- "$fragment" || fail "$*: no \"$fragment\" in: $out"
}

expect_error "config: data.batch (from --set data.batch=2305843009213693960): 2305843009213693960 (data.batch) × 32 (model.inputs) × 4 bytes overflows a 64-bit size" \
  --set data.batch=2305843009213693960
expect_error "config: model.inputs (from --set model.inputs=2305843009213693952): 2305843009213693952 features exceed the largest matrix dimension" \
  --set model.inputs=2305843009213693952
# Representable but more memory than there is: named, with the bytes.
expect_error "out of memory: data.batch 100000000000 gives 100000000000 rows per replica" --set data.batch=100000000000
# (Hundreds of terabytes: no machine this runs on can hold them, so the allocation fails at once.)
expect_error "out of memory: the synthetic data's target map [100000][2000000000] (outputs × model.inputs) needs 800000000000000 bytes" \
  --set model.inputs=2000000000 --set model.layers.7.outputs=100000
expect_error "out of memory: a [2000000000][1000000] float tensor needs 8000000000000000 bytes" \
  --set model.inputs=1000000 --set model.layers.0.outputs=2000000000
finish "overflowing-size"
