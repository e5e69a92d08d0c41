#!/bin/bash
# `sluice train` on a checkpoint that crashes libhdf5 1.10.8 itself (tests/fuzz/hdf5_crashes). Before the checkpoint
# probe (checkpoint/isolated_read.h) every rank died by SIGSEGV; now:
#  1. --resume FILE: every rank exits non-zero with "FILE: the HDF5 library crashed (signal 11, ...)", none by a
#     signal;
#  2. --resume DIR whose newest checkpoint is that file: it is skipped with a warning naming it, training resumes
#     from the older valid checkpoint and continues;
#  3. the probe is found in an installed tree (PREFIX/libexec/sluice beside PREFIX/bin/sluice) without the variable;
#  4. checkpoint.isolated_reads=always without a probe: a clear error; auto without one: said once, read in-process;
#  5. a probe that does not finish is killed at its limit (comm.timeout + 1 s per 8 MiB) and named as such.
# Usage: train_crashing_checkpoint_cli_test.sh SLUICE CONFIG CRASHING_FILE PROBE
set -u
SLUICE="$(realpath "$1")"
CONFIG="$(realpath "$2")"
CRASHER="$(realpath "$3")"
PROBE="$(realpath "$4")"
source "$(dirname "$0")/cli_test_env.sh"
MPIRUN=(mpirun --allow-run-as-root --oversubscribe -np 2 --mca btl self,vader -x SLUICE_CHECKPOINT_PROBE)
COMMON=(--set pipeline.stages=2 --set pipeline.microbatches=2)
crash_message="$CRASHER: the HDF5 library crashed (signal 11, Segmentation fault) reading it; the file is corrupt or not a Sluice checkpoint"
export SLUICE_CHECKPOINT_PROBE="$PROBE"

train() { timeout 300 "${MPIRUN[@]}" "$SLUICE" train "$CONFIG" "${COMMON[@]}" "$@"; }
no_signal_death() {  # LOG: mpirun reports a rank killed by a signal this way
  ! grep -qiE "exited on signal|signal 11 \(Segmentation fault\)\.$|Segmentation fault \(core dumped\)" "$1"
}

# --- 1. --resume FILE -------------------------------------------------------------------------------------------
train --set steps=4 --resume "$CRASHER" >"$work/file.log" 2>&1 && fail "resume from the crashing file succeeded"
grep -qF "sluice train: $crash_message" "$work/file.log" || fail "crash not reported: $(cat "$work/file.log")"
no_signal_death "$work/file.log" || fail "a rank died by a signal: $(cat "$work/file.log")"

# --- 2. --resume DIR falls back ----------------------------------------------------------------------------------
train --set steps=3 --set checkpoint.dir="$work/d" --set checkpoint.every=3 >"$work/d1.log" 2>&1 ||
  fail "first run: $(cat "$work/d1.log")"
cp "$CRASHER" "$work/d/ckpt_00000009.h5"
train --set steps=5 --resume "$work/d" >"$work/d2.log" 2>&1 || fail "directory resume failed: $(cat "$work/d2.log")"
grep -qF "sluice: warning: skipping checkpoint '$work/d/ckpt_00000009.h5', it fails verification: $work/d/ckpt_00000009.h5: the HDF5 library crashed (signal 11" "$work/d2.log" ||
  fail "crashing checkpoint not skipped with a warning: $(cat "$work/d2.log")"
grep -q "resumed from .*ckpt_00000003.h5 at step 3" "$work/d2.log" || fail "did not resume from the valid checkpoint"
grep -q "^step 5 " "$work/d2.log" || fail "training did not continue to step 5: $(cat "$work/d2.log")"

# --- 3. found in an installed tree --------------------------------------------------------------------------------
mkdir -p "$work/prefix/bin" "$work/prefix/libexec/sluice"
cp "$SLUICE" "$work/prefix/bin/sluice"
cp "$PROBE" "$work/prefix/libexec/sluice/sluice-checkpoint-probe"
SLUICE_CHECKPOINT_PROBE= timeout 300 "${MPIRUN[@]}" "$work/prefix/bin/sluice" train "$CONFIG" "${COMMON[@]}" \
  --set steps=4 --set checkpoint.isolated_reads=always --resume "$CRASHER" >"$work/installed.log" 2>&1 &&
  fail "installed tree: resume from the crashing file succeeded"
grep -qF "$crash_message" "$work/installed.log" || fail "installed tree: probe not found: $(cat "$work/installed.log")"

# --- 4. always / auto without a probe ----------------------------------------------------------------------------
mkdir -p "$work/alone/bin"
cp "$SLUICE" "$work/alone/bin/sluice"
valid="$work/d/ckpt_00000003.h5"
SLUICE_CHECKPOINT_PROBE= timeout 300 "${MPIRUN[@]}" "$work/alone/bin/sluice" train "$CONFIG" "${COMMON[@]}" \
  --set steps=4 --set checkpoint.isolated_reads=always --resume "$valid" >"$work/always.log" 2>&1 &&
  fail "always without a probe was accepted"
grep -qF "$valid: checkpoint.isolated_reads is always but the checkpoint probe sluice-checkpoint-probe was not found (looked at $work/alone/bin/../libexec/sluice/sluice-checkpoint-probe $work/alone/bin/sluice-checkpoint-probe; set SLUICE_CHECKPOINT_PROBE" "$work/always.log" ||
  fail "always without a probe: unclear error: $(cat "$work/always.log")"
SLUICE_CHECKPOINT_PROBE= timeout 300 "${MPIRUN[@]}" "$work/alone/bin/sluice" train "$CONFIG" "${COMMON[@]}" \
  --set steps=4 --resume "$valid" >"$work/auto.log" 2>&1 || fail "auto without a probe failed: $(cat "$work/auto.log")"
[ "$(grep -c "checkpoint.isolated_reads is auto and no sluice-checkpoint-probe was found" "$work/auto.log")" -eq 1 ] ||
  fail "auto without a probe is not said exactly once: $(cat "$work/auto.log")"

# --- 5. a probe that hangs is killed ------------------------------------------------------------------------------
printf '#!/bin/sh\nexec sleep 600\n' >"$work/hanging_probe"
chmod +x "$work/hanging_probe"
start=$SECONDS
SLUICE_CHECKPOINT_PROBE="$work/hanging_probe" train --set steps=4 --set comm.timeout=2 --resume "$valid" \
  >"$work/hang.log" 2>&1 && fail "a hanging probe was accepted"
grep -qF "$valid: reading it did not finish within 2" "$work/hang.log" || fail "hanging probe not reported: $(cat "$work/hang.log")"
grep -qF "the reading process was killed" "$work/hang.log" || fail "hanging probe not killed: $(cat "$work/hang.log")"
[ $((SECONDS - start)) -lt 60 ] || fail "the hanging probe was waited for $((SECONDS - start)) s"
pgrep -f "sleep 600" >/dev/null && fail "the hanging probe is still running"

finish "crashing-checkpoint"
