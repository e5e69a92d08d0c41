#!/bin/bash
# SIGTERM to the mpirun launcher (tools/sluice_mpirun.sh): the ranks write one complete checkpoint that
# verifies, the launcher exits 75 (preempted, resume me), and running the same command resumes from it. A second
# SIGTERM stops the ranks at once (SIGKILL) and the launcher exits 1 (75 if the checkpoint came first); mpirun
# must never crash (exit 139).
# The control: SIGTERM to a bare mpirun (Open MPI 4.1) exits 1 however the ranks end -- why the wrapper exists.
# The launcher runs the ranks under its fork agent (tools:sluice-mpirun-rank), so a stop prints no abort banner.
# Usage: mpirun_sigterm_test.sh SLUICE CONFIG SLUICE_MPIRUN SLUICE_MPIRUN_RANK
set -u
SLUICE="$1"
CONFIG="$2"
LAUNCHER="$3"
SLUICE_MPIRUN_RANK_AGENT="$(realpath "$4")"
export SLUICE_MPIRUN_RANK_AGENT
source "$(dirname "$0")/cli_test_env.sh"
# Short grace: the bare mpirun below (and the launcher after a second signal) waits twice this long after a rank's
# non-zero exit before it returns (the default is 30 s).
export OMPI_MCA_odls_base_sigkill_timeout=2
MPI_OPTIONS=(--allow-run-as-root --oversubscribe -np 4 --mca btl self,vader)
TRAIN=("$SLUICE" train "$CONFIG" --set steps=1000000 --set checkpoint.dir="$work/ck" --auto-resume)

show() { echo "---- $1 ----"; tail -n 30 "$1"; }
# wait_for_steps LOG: bounded wait until the run has made some progress (a step line after step 1)
wait_for_steps() {
  for _ in $(seq 1 600); do
    grep -q "^step 5 " "$1" && return 0
    sleep 0.1
  done
  return 1
}
# signal_if_running SIGNAL PID: only while PID is still this shell's child. A stop with 75 now ends within a
# fraction of a second, and a PID that is gone may already be another process's (PIDs are few and soon reused in
# Bazel's PID namespace).
signal_if_running() {
  [ "$(ps -o ppid= -p "$2" 2>/dev/null | tr -d ' ')" = "$$" ] && kill -"$1" "$2"
  return 0
}
# stop_with_sigterm PID: SIGTERM, then a bounded wait; sets `status` (124 when it did not end in 60 s). Not
# in a command substitution: only this shell can `wait` for its child.
stop_with_sigterm() {
  signal_if_running TERM "$1"
  for _ in $(seq 1 600); do
    kill -0 "$1" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$1" 2>/dev/null && { kill -KILL "$1"; wait "$1"; status=124; return; }
  wait "$1"
  status=$?
}

# --- the launcher: SIGTERM -> checkpoint, 75 --------------------------------------------------------------
"$LAUNCHER" "${MPI_OPTIONS[@]}" "${TRAIN[@]}" >"$work/run.log" 2>&1 &
launcher=$!
wait_for_steps "$work/run.log" || fail "no training progress within 60 s: $(show "$work/run.log")"
stop_with_sigterm "$launcher"
[ "$status" = 75 ] || fail "launcher exited $status after SIGTERM, expected 75: $(show "$work/run.log")"
checkpoints=("$work"/ck/ckpt_*.h5)
[ "${#checkpoints[@]}" -eq 1 ] && [ -f "${checkpoints[0]}" ] || fail "expected one checkpoint, found: $(ls -a "$work/ck")"
leftovers="$(find "$work/ck" -name '*.tmp*')"
[ -z "$leftovers" ] || fail "a temporary checkpoint was left behind: $leftovers"
"$SLUICE" inspect "${checkpoints[0]}" >"$work/inspect.log" 2>&1 || fail "inspect failed: $(show "$work/inspect.log")"
grep -q "checksums: .*all [0-9]* verified" "$work/inspect.log" || fail "checksums not verified: $(show "$work/inspect.log")"
grep -q "exiting with 75" "$work/run.log" || fail "the ranks did not report exit 75: $(show "$work/run.log")"
! grep -q "Per user-direction, the job has been aborted" "$work/run.log" ||
  fail "Open MPI's abort banner for the ranks' 75: $(show "$work/run.log")"

# --- the same command resumes from that checkpoint and finishes ------------------------------------------
stop_step="$(basename "${checkpoints[0]}" .h5)"
stop_step="$((10#${stop_step#ckpt_}))"
"$LAUNCHER" "${MPI_OPTIONS[@]}" "${TRAIN[@]}" --set steps=$((stop_step + 2)) >"$work/resume.log" 2>&1 ||
  fail "resumed run failed: $(show "$work/resume.log")"
grep -q "^step $((stop_step + 1)) " "$work/resume.log" && ! grep -q "^step $stop_step " "$work/resume.log" ||
  fail "resumed run did not start at step $((stop_step + 1)): $(show "$work/resume.log")"

# --- repeated signals: a second and third SIGTERM stop the ranks at once; mpirun itself must not crash -------
# (Open MPI 4.1's mpirun, already forwarding the first signal, segfaulted on a SIGTERM of its own: exit 139,
# when the second signal came 0.2-1 s after the first. With the fork agent a stop with 75 ends within some 0.3 s,
# so the second signal comes sooner, or finds the launcher gone and the run stopped with 75.)
for delay in 0 0.05 0.2; do
  rm -rf "$work/ck"
  "$LAUNCHER" "${MPI_OPTIONS[@]}" "${TRAIN[@]}" >"$work/again.log" 2>&1 &
  launcher=$!
  wait_for_steps "$work/again.log" || fail "no training progress within 60 s: $(show "$work/again.log")"
  kill -TERM "$launcher"
  sleep "$delay"
  signal_if_running TERM "$launcher"
  sleep 0.2
  stop_with_sigterm "$launcher"
  [ "$status" != 124 ] || fail "the launcher did not end within 60 s of a third SIGTERM: $(show "$work/again.log")"
  [ "$status" != 139 ] && ! grep -q "Segmentation fault" "$work/again.log" ||
    fail "second SIGTERM $delay s after the first: mpirun crashed (exit $status): $(show "$work/again.log")"
  [ "$status" = 1 ] || [ "$status" = 75 ] ||
    fail "exit $status after a second SIGTERM, expected 1 (stopped at once) or 75 (checkpoint already written)"
  # Unless the checkpoint was already written and the ranks gone (then 75), the second signal stopped them.
  [ "$status" = 75 ] || grep -q "received again: stopping the ranks at once" "$work/again.log" ||
    fail "the launcher did not say what the second SIGTERM does: $(show "$work/again.log")"
done

# --- control: a bare mpirun loses the status ------------------------------------------------------------
rm -rf "$work/ck"
mpirun "${MPI_OPTIONS[@]}" "${TRAIN[@]}" >"$work/bare.log" 2>&1 &
bare=$!
wait_for_steps "$work/bare.log" || fail "bare mpirun: no progress within 60 s: $(show "$work/bare.log")"
stop_with_sigterm "$bare"
[ "$status" != 75 ] || fail "bare mpirun now returns 75 on SIGTERM: the launcher may be unnecessary (update docs/SLURM.md)"

finish "mpirun SIGTERM"
