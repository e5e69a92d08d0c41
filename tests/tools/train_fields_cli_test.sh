#!/bin/bash
# A convolutional model on 2-D periodic fields through the command line: `sluice plan` prints the per-layer table
# (output shapes and parameter counts as PyTorch gives them for the same model: 12492 parameters), `sluice train`
# runs it on 4 pipeline ranks, and a run stopped at step 3 and resumed ends with the same parameters and optimizer
# state as an uninterrupted one; a restart with the field's shape changed is refused, naming model.inputs.
# Usage: train_fields_cli_test.sh SLUICE CONFIG
set -u
SLUICE="$1"
CONFIG="$2"
source "$(dirname "$0")/cli_test_env.sh"
MPIRUN=(mpirun --allow-run-as-root --oversubscribe -np 4 --mca btl self,vader)

train() { timeout 300 "${MPIRUN[@]}" "$SLUICE" train "$CONFIG" "$@"; }
same_state() { h5diff -q "$1" "$2" /model /model && h5diff -q "$1" "$2" /optimizer /optimizer; }

plan="$(timeout 60 "$SLUICE" plan "$CONFIG" 2>&1)" || fail "plan: $plan"
echo "$plan" | grep -qE "^4 +conv +\[16, 16, 16\] +1168 " || fail "plan: no strided conv row: $plan"
echo "$plan" | grep -qE "^9 +flatten +\[1024\] " || fail "plan: no flatten row: $plan"
echo "$plan" | grep -q "^total: 12492 parameters" || fail "plan: total differs from PyTorch's 12492: $plan"

train --set steps=6 --set checkpoint.dir="$work/a" --set checkpoint.every=6 >"$work/a.log" 2>&1 ||
  fail "uninterrupted run: $(cat "$work/a.log")"
grep -q "^step 6 " "$work/a.log" || fail "no step 6: $(cat "$work/a.log")"
train --set steps=3 --set checkpoint.dir="$work/b" --set checkpoint.every=3 >"$work/b1.log" 2>&1 ||
  fail "first half: $(cat "$work/b1.log")"
train --set steps=6 --set checkpoint.dir="$work/b" --set checkpoint.every=6 --resume "$work/b" >"$work/b2.log" 2>&1 ||
  fail "resumed half: $(cat "$work/b2.log")"
same_state "$work/a/ckpt_00000006.h5" "$work/b/ckpt_00000006.h5" || fail "resumed conv run differs from uninterrupted run"
# The check can fail: another seed gives other parameters.
train --set steps=6 --set seed=2 --set checkpoint.dir="$work/s" --set checkpoint.every=6 >/dev/null 2>&1
same_state "$work/a/ckpt_00000006.h5" "$work/s/ckpt_00000006.h5" >/dev/null 2>&1 && fail "h5diff did not see another seed"
# Same number of features, another field: a restart must refuse it.
train --set steps=6 --set 'model.inputs=[2, 16, 64]' --resume "$work/b" >"$work/shape.log" 2>&1 &&
  fail "a restart on a [2, 16, 64] field was accepted"
grep -qF "model.inputs = [2, 32, 32] but the config now has [2, 16, 64]" "$work/shape.log" ||
  fail "changed field shape not named: $(cat "$work/shape.log")"
echo "PASS"
