#!/bin/bash
# kill -9 of every rank while an application's MID-WINDOW checkpoint is being written (tests/capi/accumulating_loop.c:
# optimizer.accumulate 4, a checkpoint every optimizer step, a 64 MB registered field so that a save lasts long
# enough to be caught, 2 ranks under mpirun):
#   1. an uninterrupted run of 16 time steps is the reference;
#   2. the run under test holds two calls into a window, gets SIGUSR1 (mpirun forwards it to the ranks) and starts
#      writing its preemption checkpoint. The moment the temporary file appears every rank is frozen (SIGSTOP); a
#      frozen rank cannot finish the rename, so if the temporary is still there the save is caught mid-write and
#      every rank (and mpirun) gets kill -9. (If the save had already finished, the ranks are thawed, the run exits
#      75 with a complete mid-window checkpoint, and the next run, resumed from it, is tried at its next window.)
#   3. the previous checkpoint -- the step-boundary one of the same optimizer step -- is still the latest and
#      intact; a new run resumes from it, redoes the lost calls, removes the dead temporary and finishes with
#      model, optimizer, /train and the field bit-identical to the reference (h5diff).
# Usage: mid_window_kill_test.sh PROGRAM
set -uo pipefail
program="$(realpath "$1")"
readonly steps=16 accumulate=4 field_mb=64

work="$(mktemp -d /tmp/sl-kill.XXXXXX)"
run_pid=""
cleanup() {
  local status=$?
  if [ -n "$run_pid" ] && kill -0 "$run_pid" 2>/dev/null; then
    kill -9 $(pgrep -P "$run_pid") "$run_pid" 2>/dev/null
  fi
  if [ "$status" -ne 0 ]; then
    for f in "$work"/*.log; do [ -f "$f" ] && { echo "---- $f ----"; tail -n 20 "$f"; }; done
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
export TMPDIR="$work" OMPI_MCA_orte_tmpdir_base="$work" OMPI_MCA_btl_vader_backing_directory="$work"
MPIRUN=(mpirun --allow-run-as-root --oversubscribe -np 2 --mca btl self,vader)
h5value() { h5dump -d "$2" "$1" | grep -m1 -A1 "DATA {" | tail -1 | sed 's/.*: *//; s/ *$//'; }
write_config() {  # FILE DIR
  cat > "$1" <<EOF
model:
  inputs: 8
  layers:
    - {type: linear, outputs: 16}
    - {type: tanh}
    - {type: linear, outputs: 4}
pipeline: {stages: 2, schedule: 1f1b, microbatches: 2}
loss: mse
optimizer: {type: adamw, lr: 0.01, accumulate: $accumulate}
data: {type: external, batch: 16}
checkpoint: {dir: $2, every: 1, keep: 3}
seed: 5
EOF
}
write_config "$work/reference.yaml" "$work/ref"
write_config "$work/killed.yaml" "$work/ckpt"
run() {  # CONFIG HOLD_AT: one run in the foreground
  SLUICE_CONFIG="$1" timeout 300 "${MPIRUN[@]}" "$program" "$steps" "$2" "$field_mb"
}

# --- 1. reference ---------------------------------------------------------------------------------------------
run "$work/reference.yaml" 0 > "$work/reference.log" 2>&1 || fail "reference run exited $?"

# --- 2. freeze and kill the mid-window save ---------------------------------------------------------------
caught=0
for hold_at in 6 10 14; do  # two calls into windows 2, 3 and 4
  log="$work/hold_$hold_at.log"
  SLUICE_CONFIG="$work/killed.yaml" "${MPIRUN[@]}" "$program" "$steps" "$hold_at" "$field_mb" > "$log" 2>&1 &
  run_pid=$!
  for _ in $(seq 600); do grep -q "^holding after time step $hold_at\$" "$log" && break; sleep 0.1; done
  grep -q "^holding after time step $hold_at\$" "$log" || fail "the run did not hold after time step $hold_at"
  ranks="$(pgrep -P "$run_pid")"
  kill -USR1 "$run_pid"
  for _ in $(seq 4000); do
    temporary="$(ls "$work/ckpt"/ckpt_*.h5.tmp-* 2>/dev/null | head -n 1)"
    [ -n "$temporary" ] && break
    kill -0 "$run_pid" 2>/dev/null || break
    sleep 0.005
  done
  if [ -n "$temporary" ]; then
    kill -STOP $ranks 2>/dev/null
    sleep 0.2
    if [ -e "$temporary" ]; then
      kill -9 $ranks "$run_pid" 2>/dev/null
      wait "$run_pid" 2>/dev/null
      run_pid=""
      caught="$hold_at"
      break
    fi
    kill -CONT $ranks 2>/dev/null
  fi
  wait "$run_pid"
  status=$?
  run_pid=""
  [ "$status" -eq 75 ] || fail "a preempted run that was not caught exited $status, expected 75"
  echo "the save after time step $hold_at finished before the ranks froze; trying the next window"
done
[ "$caught" -gt 0 ] || fail "never froze a mid-window save while it was written (3 tries)"
step=$((caught / accumulate))
previous="$(printf '%s/ckpt/ckpt_%08d.h5' "$work" "$step")"
echo "froze the mid-window save after time step $caught (window position $((caught % accumulate)))"

# --- 3. the previous checkpoint survives and the run finishes as if never killed ---------------------------
[ -e "$temporary" ] || fail "the killed save left no temporary (was it renamed?)"
[ -f "$previous" ] || fail "the previous checkpoint $previous is gone"
[ "$(h5value "$previous" /train/accumulation_position)" = 0 ] ||
  fail "$previous is not the step-boundary checkpoint (the killed save replaced it)"
[ "$(h5value "$previous" /application/time_step)" = $((step * accumulate)) ] ||
  fail "$previous does not hold time step $((step * accumulate))"
run "$work/killed.yaml" 0 > "$work/resumed.log" 2>&1 || fail "the resumed run exited $?"
grep -q "^first time step $((step * accumulate + 1))\$" "$work/resumed.log" ||
  fail "the run did not resume from $previous: $(grep '^first' "$work/resumed.log")"
grep -q "^finished $steps time steps\$" "$work/resumed.log" || fail "the resumed run did not finish"
[ ! -e "$temporary" ] || fail "the dead temporary $temporary was not removed by the next rotation"
final="$(printf 'ckpt_%08d.h5' $((steps / accumulate)))"
for group in /model /optimizer /train /application; do
  h5diff "$work/ref/$final" "$work/ckpt/$final" "$group" "$group" > "$work/h5diff.log" 2>&1 ||
    fail "$group differs from the uninterrupted run's: $(head -n 5 "$work/h5diff.log")"
done
# The comparison can fail: the checkpoint the run resumed from is behind the final one.
! h5diff -q "$previous" "$work/ckpt/$final" /application /application > /dev/null 2>&1 ||
  fail "h5diff sees no change in the field across time steps"
echo "PASS: kill -9 during the mid-window save after time step $caught; resumed from $(basename "$previous"), finished equal"
