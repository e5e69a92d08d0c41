#!/bin/bash
# Checkpoint, restart and preemption through `sluice train` under mpirun:
#  1. stop after 3 steps, `--resume DIR`, continue to 6: the step-6 checkpoint equals an uninterrupted run's,
#     bit for bit (h5diff compares exactly by default);
#  2. SIGUSR1 in the middle of a run: every rank agrees at a step boundary, one checkpoint is written, exit
#     code 75; `--auto-resume` finishes the run, again equal to the uninterrupted one;
#  3. kill -9 while a checkpoint is being written: the previous checkpoint stays the latest and verifies, and
#     --auto-resume continues from it;
#  4. a flipped bit in the latest checkpoint: --auto-resume warns, naming it, and resumes from the one before.
# Usage: train_resume_test.sh SLUICE CONFIG
set -u
SLUICE="$1"
CONFIG="$2"
source "$(dirname "$0")/cli_test_env.sh"
MPIRUN=(mpirun --allow-run-as-root --oversubscribe -np 4 --mca btl self,vader)

train() { timeout 300 "${MPIRUN[@]}" "$SLUICE" train "$CONFIG" "$@"; }
same_state() {  # FILE_A FILE_B: parameters and optimizer state identical
  h5diff -q "$1" "$2" /model /model && h5diff -q "$1" "$2" /optimizer /optimizer
}

# --- 1. stop, resume, continue ------------------------------------------------------------------------
train --set steps=6 --set checkpoint.dir="$work/a" --set checkpoint.every=6 >"$work/a.log" 2>&1 || fail "uninterrupted run: $(cat "$work/a.log")"
train --set steps=3 --set checkpoint.dir="$work/b" --set checkpoint.every=3 >"$work/b1.log" 2>&1 || fail "first half: $(cat "$work/b1.log")"
train --set steps=6 --set checkpoint.dir="$work/b" --set checkpoint.every=6 --resume "$work/b" >"$work/b2.log" 2>&1 ||
  fail "resumed half: $(cat "$work/b2.log")"
grep -q "resumed from .*ckpt_00000003.h5 at step 3" "$work/b2.log" || fail "resume not reported: $(cat "$work/b2.log")"
grep -q "^step 4 " "$work/b2.log" && ! grep -q "^step 3 " "$work/b2.log" || fail "resumed run did not start at step 4"
same_state "$work/a/ckpt_00000006.h5" "$work/b/ckpt_00000006.h5" || fail "resumed run differs from uninterrupted run"
# A restart refuses a changed layer, naming the first field that differs (LayerSpec equality ignores the line).
train --set steps=6 --set checkpoint.dir="$work/b" --set model.layers.2.p=0.2 --resume "$work/b" >"$work/p.log" 2>&1 &&
  fail "a restart with another dropout p was accepted"
grep -qF "was written with model.layers.2.p = 0.100000 but the config now has 0.200000" "$work/p.log" ||
  fail "changed layer not named: $(cat "$work/p.log")"
# The same check must be able to fail: a run with another seed differs.
train --set steps=6 --set seed=2 --set checkpoint.dir="$work/s" --set checkpoint.every=6 >/dev/null 2>&1
same_state "$work/a/ckpt_00000006.h5" "$work/s/ckpt_00000006.h5" >/dev/null 2>&1 && fail "h5diff did not see a different seed"
# The documented layout (docs/CHECKPOINT_FORMAT.md), read with h5dump from a checkpoint a training run wrote.
ck="$work/a/ckpt_00000006.h5"
header="$(h5dump -H "$ck")" || fail "h5dump cannot read $ck"
for item in 'ATTRIBUTE "config"' 'ATTRIBUTE "format_version"' 'ATTRIBUTE "layout_stages"' 'ATTRIBUTE "layout_schedule"' \
  'GROUP "model"' 'GROUP "layer_0000"' 'DATASET "weight"' 'ATTRIBUTE "crc32"' 'GROUP "optimizer"' \
  'DATASET "exp_avg_sq"' 'GROUP "train"' 'DATASET "step"' 'DATASET "seed"' 'DATASET "data_position"' \
  'DATASET "optimizer_steps"' 'GROUP "accumulation"'; do
  echo "$header" | grep -qF "$item" || fail "h5dump shows no $item"
done
value() { h5dump "$@" "$ck" | grep -m1 -A1 "DATA {" | tail -1 | sed 's/.*: *//; s/"//g; s/ *$//'; }
[ "$(value -d /train/step)" = "6" ] || fail "/train/step is $(value -d /train/step), expected 6"
[ "$(value -a /layout_stages)" = "4" ] || fail "layout_stages is $(value -a /layout_stages), expected 4"
# The per-dataset checksum (format_version 2 and 3) is the standard CRC-32 of the dataset's manifest line
# "path|type|dims" followed by the stored bytes: a user can recompute it (docs/CHECKPOINT_FORMAT.md).
[ "$(value -a /format_version)" = "3" ] || fail "format_version is $(value -a /format_version), expected 3"
h5dump -d /model/layer_0000/weight -b LE -o "$work/w.bin" "$ck" >/dev/null || fail "h5dump -b failed"
dims="$(h5dump -H -d /model/layer_0000/weight "$ck" | sed -n 's/.*DATASPACE *SIMPLE { ( \([0-9, ]*\) ).*/\1/p' | tr -d ' ')"
h5dump -d /manifest "$ck" | grep -qF "/model/layer_0000/weight|float32|$dims" || fail "/manifest does not list the weight as float32 [$dims]"
crc_file="$(value -a /model/layer_0000/weight/crc32)"
crc_here="$(python3 -c "import sys, zlib; print(zlib.crc32(open(sys.argv[1], 'rb').read(), zlib.crc32(sys.argv[2].encode())))" \
  "$work/w.bin" "/model/layer_0000/weight|float32|$dims")"
[ "$crc_file" = "$crc_here" ] || fail "crc32 attribute $crc_file != zlib.crc32 of the manifest line and the data $crc_here"
# Resharded restart: 2 stages x 2 replicas from the 4-stage checkpoint runs and finishes.
train --set steps=6 --set pipeline.stages=2 --resume "$work/b/ckpt_00000003.h5" >"$work/r.log" 2>&1 || fail "reshard: $(cat "$work/r.log")"
grep -q "^step 6 " "$work/r.log" || fail "resharded run did not finish"

# --- 2. preemption by SIGUSR1 ---------------------------------------------------------------------------
BIG=(--set steps=30 --set data.batch=2048 --set model.layers.0.outputs=512 --set model.layers.3.outputs=512)
train "${BIG[@]}" --set checkpoint.dir="$work/u" --set checkpoint.every=30 >"$work/u.log" 2>&1 || fail "big uninterrupted: $(cat "$work/u.log")"
"${MPIRUN[@]}" "$SLUICE" train "$CONFIG" "${BIG[@]}" --set checkpoint.dir="$work/p" --set checkpoint.every=30 >"$work/p1.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do grep -q "^step 3 " "$work/p1.log" && break; sleep 0.05; done
kill -USR1 "$pid"  # mpirun forwards SIGUSR1 to every rank
wait "$pid"
code=$?
[ "$code" -eq 75 ] || fail "preempted run exited $code, expected 75: $(cat "$work/p1.log")"
grep -q "preempted: checkpoint" "$work/p1.log" || fail "no preemption checkpoint reported"
ls "$work/p"/ckpt_*.h5 >/dev/null 2>&1 || fail "no checkpoint written on preemption"
train "${BIG[@]}" --set checkpoint.dir="$work/p" --set checkpoint.every=30 --auto-resume >"$work/p2.log" 2>&1 || fail "auto-resume: $(cat "$work/p2.log")"
grep -q "resumed from" "$work/p2.log" || fail "auto-resume did not resume"
same_state "$work/u/ckpt_00000030.h5" "$work/p/ckpt_00000030.h5" || fail "preempted+resumed run differs from uninterrupted run"

# --- 3. kill -9 during a checkpoint write --------------------------------------------------------------
# A save is short (tens of ms), so polling for its temporary file and then killing would race with the rename
# (a CI run once saw the kill land after it). Instead every rank is frozen (SIGSTOP) the moment a temporary file
# shows up; a frozen process cannot finish a rename, so if the final file is still absent the save is caught
# mid-write and the ranks are killed with -9. If the save had already finished, the ranks are thawed and the
# next step's save is tried. A big residual block (~50 MB per checkpoint) makes each save last long enough.
HUGE=(--set checkpoint.every=1 --set checkpoint.keep=10 --set model.layers.6.hidden=32768)
"${MPIRUN[@]}" "$SLUICE" train "$CONFIG" "${HUGE[@]}" --set steps=8 --set checkpoint.dir="$work/k" >"$work/k.log" 2>&1 &
pid=$!
caught=0
tried=""
for _ in $(seq 1 6000); do
  kill -0 "$pid" 2>/dev/null || break
  temporary="$(ls "$work/k"/ckpt_*.h5.tmp-* 2>/dev/null | head -1)"
  final="${temporary%.tmp-*}"
  step="$(basename "$final" .h5 | sed 's/^ckpt_0*//')"
  # Step 1's save has no predecessor to fall back on: start at step 2.
  if [ -n "$temporary" ] && [ "$final" != "$tried" ] && [ "${step:-0}" -ge 2 ]; then
    tried="$final"
    # Open MPI puts each rank in its own process group: signal the ranks (mpirun's children) by PID.
    ranks="$(pgrep -P "$pid")"
    kill -STOP $ranks 2>/dev/null
    sleep 0.2
    if [ -e "$temporary" ] && [ ! -e "$final" ]; then
      kill -9 $ranks "$pid" 2>/dev/null
      caught="$step"
      break
    fi
    kill -CONT $ranks 2>/dev/null
  fi
  sleep 0.005
done
wait "$pid" 2>/dev/null
if [ "$caught" -ge 2 ]; then
  echo "froze the step-$caught save mid-write"
  previous="$(printf 'ckpt_%08d.h5' $((caught - 1)))"
  [ ! -e "$final" ] || fail "a killed save left a complete-looking $(basename "$final")"
  "$SLUICE" inspect "$work/k" >"$work/inspect.log" 2>&1 || fail "previous checkpoint does not verify: $(cat "$work/inspect.log")"
  grep -q "$previous" "$work/inspect.log" || fail "latest checkpoint is not $previous: $(cat "$work/inspect.log")"
  # Nothing is lost: --auto-resume ignores the half-written file and continues from the previous checkpoint.
  train "${HUGE[@]}" --set steps=$((caught + 1)) --set checkpoint.dir="$work/k" --auto-resume >"$work/k2.log" 2>&1 ||
    fail "auto-resume after kill -9: $(cat "$work/k2.log")"
  grep -q "resumed from .*$previous at step $((caught - 1))" "$work/k2.log" ||
    fail "auto-resume after kill -9 did not start from $previous: $(cat "$work/k2.log")"
  [ -e "$work/k/$(printf 'ckpt_%08d.h5' $((caught + 1)))" ] || fail "auto-resumed run wrote no checkpoint at its last step"
else
  fail "never froze a save mid-write in 7 tries (log: $(cat "$work/k.log"))"
fi

# --- 4. a corrupt latest checkpoint is skipped by --auto-resume -------------------------------------------
# One flipped bit in a dataset of the newest file (found with h5ls, independently of Sluice): --auto-resume warns,
# naming the file and the checksum, resumes from the one before, and ends equal to a run resumed from that file.
C=(--set checkpoint.keep=3)
train "${C[@]}" --set steps=3 --set checkpoint.dir="$work/c" --set checkpoint.every=1 >"$work/c1.log" 2>&1 || fail "corrupt setup: $(cat "$work/c1.log")"
train "${C[@]}" --set steps=5 --set checkpoint.dir="$work/cref" --set checkpoint.every=5 --resume "$work/c/ckpt_00000002.h5" \
  >"$work/cref.log" 2>&1 || fail "run resumed from step 2: $(cat "$work/cref.log")"
latest="$work/c/ckpt_00000003.h5"
address="$(h5ls -va "$latest/model/layer_0000/weight" | sed -n 's/^ *Address: *\([0-9]*\)$/\1/p')"
[ -n "$address" ] || fail "h5ls shows no address for /model/layer_0000/weight"
python3 -c "import sys; f = open(sys.argv[1], 'r+b'); f.seek(int(sys.argv[2]) + 2); b = f.read(1); f.seek(-1, 1); f.write(bytes([b[0] ^ 0x10]))" \
  "$latest" "$address"
train "${C[@]}" --set steps=5 --set checkpoint.dir="$work/c" --set checkpoint.every=5 --auto-resume >"$work/c2.log" 2>&1 ||
  fail "auto-resume past a corrupt checkpoint: $(cat "$work/c2.log")"
grep -q "warning: skipping checkpoint '$latest', it fails verification: .*checksum mismatch" "$work/c2.log" ||
  fail "no warning naming the corrupt checkpoint: $(cat "$work/c2.log")"
grep -q "resumed from .*ckpt_00000002.h5 at step 2" "$work/c2.log" || fail "did not fall back to step 2: $(cat "$work/c2.log")"
same_state "$work/cref/ckpt_00000005.h5" "$work/c/ckpt_00000005.h5" || fail "run past the corrupt checkpoint differs"

finish "resume"
