#!/bin/bash
# The generated batch script's own logic, without Slurm: `srun` and `scontrol` are stand-ins on PATH that
# record how they were called. Checks that USR1 reaching the batch shell is forwarded to the job step, that
# exit 75 leads to `scontrol requeue $SLURM_JOB_ID` and exit 0, and that other statuses pass through.
# Also checks `sluice submit`'s error exits (bad task fit -> 2, no sbatch on PATH -> 1).
#
# Usage: sbatch_template_test.sh SLUICE CONFIG
set -euo pipefail
sluice="$(realpath "$1")"
config="$(realpath "$2")"
work="$(mktemp -d /tmp/sluice-template.XXXXXX)"
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# --- stand-ins -------------------------------------------------------------------------------------------
mkdir -p "$work/bin"
cat > "$work/bin/srun" <<'FAKE'
#!/bin/bash
# Like a job step: runs until told to stop; USR1 makes it "checkpoint" and exit 75.
echo "$*" > "$RECORD_DIR/srun.args"
trap 'echo USR1 >> "$RECORD_DIR/srun.signals"; exit 75' USR1
touch "$RECORD_DIR/srun.started"
for _ in $(seq 300); do
  [ -f "$RECORD_DIR/srun.finish" ] && exit "${FAKE_SRUN_EXIT:-0}"
  sleep 0.1
done
exit 99
FAKE
cat > "$work/bin/scontrol" <<'FAKE'
#!/bin/bash
echo "$*" >> "$RECORD_DIR/scontrol.args"
exit "${FAKE_SCONTROL_EXIT:-0}"
FAKE
chmod +x "$work/bin/srun" "$work/bin/scontrol"

"$sluice" submit "$config" --nodes 1 --time 00:10:00 --dry-run --sluice /opt/fake/sluice \
  --output-dir "$work/logs" --set steps=7 > "$work/job.sbatch"
bash -n "$work/job.sbatch" || fail "generated script is not valid bash"
grep -qx '#SBATCH --ntasks=4' "$work/job.sbatch" || fail "mlp.yaml has 4 stages: expected --ntasks=4"

# Runs the batch script with the stand-ins; $1: "signal" to send USR1 once the step runs, or "finish".
run_case() {
  local how="$1"
  export RECORD_DIR="$work/case.$RANDOM"
  mkdir -p "$RECORD_DIR"
  SLURM_JOB_ID=4242 PATH="$work/bin:$PATH" bash "$work/job.sbatch" > "$RECORD_DIR/batch.out" 2>&1 &
  local batch_pid=$!
  for _ in $(seq 100); do [ -f "$RECORD_DIR/srun.started" ] && break; sleep 0.1; done
  [ -f "$RECORD_DIR/srun.started" ] || fail "stand-in srun never started"
  if [ "$how" = signal ]; then kill -USR1 "$batch_pid"; else touch "$RECORD_DIR/srun.finish"; fi
  set +e
  wait "$batch_pid"
  status=$?
  set -e
}

# 1. Preemption: USR1 to the batch shell -> forwarded -> step exits 75 -> requeue, exit 0.
run_case signal
[ "$status" -eq 0 ] || fail "preempted job: batch script exited $status, expected 0 (requeued)"
[ "$(cat "$RECORD_DIR/srun.signals")" = USR1 ] || fail "USR1 was not forwarded to the job step"
[ "$(cat "$RECORD_DIR/scontrol.args")" = "requeue 4242" ] || fail "expected 'scontrol requeue 4242', got '$(cat "$RECORD_DIR/scontrol.args" 2>/dev/null)'"
[ "$(cat "$RECORD_DIR/srun.args")" = "--mpi=pmix /opt/fake/sluice train $config --auto-resume --set steps=7" ] ||
  fail "unexpected srun command line: $(cat "$RECORD_DIR/srun.args")"

# 2. A failing step: its status is the job's, and nothing is requeued.
FAKE_SRUN_EXIT=3 run_case finish
[ "$status" -eq 3 ] || fail "failed step: batch script exited $status, expected the step's 3"
[ ! -f "$RECORD_DIR/scontrol.args" ] || fail "a failed (not preempted) job was requeued"

# 3. A finished step: exit 0, no requeue.
FAKE_SRUN_EXIT=0 run_case finish
[ "$status" -eq 0 ] || fail "finished step: batch script exited $status"
[ ! -f "$RECORD_DIR/scontrol.args" ] || fail "a finished job was requeued"

# 4. Preempted but the requeue fails: exit 75, so the failure is visible in sacct/sbatch --wait.
FAKE_SCONTROL_EXIT=1 run_case signal
[ "$status" -eq 75 ] || fail "requeue failure: batch script exited $status, expected 75"

# --- sluice submit's own errors ------------------------------------------------------------------------
set +e
"$sluice" submit "$config" --nodes 1 --tasks-per-node 2 --dry-run > /dev/null 2> "$work/fit.err"
fit_status=$?
(cd "$work" && PATH=/nonexistent "$sluice" submit "$config" --nodes 1 --output-dir "$work/nosbatch" \
  > /dev/null 2> "$work/nosbatch.err")
nosbatch_status=$?
set -e
[ "$fit_status" -eq 2 ] || fail "tasks that do not fit: exit $fit_status, expected 2"
grep -q "4 tasks do not fit --nodes 1 x --tasks-per-node 2 = 2 slots" "$work/fit.err" || fail "fit message: $(cat "$work/fit.err")"
[ "$nosbatch_status" -eq 1 ] || fail "no sbatch: exit $nosbatch_status, expected 1"
grep -q "Slurm not found.*run with mpirun: mpirun -np 4 " "$work/nosbatch.err" || fail "no-sbatch message: $(cat "$work/nosbatch.err")"

echo "PASS: sbatch template forwarding/requeue logic and sluice submit errors"
