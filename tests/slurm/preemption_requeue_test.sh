#!/bin/bash
# End to end on a real single-node Slurm: `sluice submit --wait` a 4-rank CPU training job, send SIGUSR1 to
# its batch shell mid-run, and check the whole promise: the ranks agree to stop and write a checkpoint, the
# job exits 75 and requeues itself, runs again with SLURM_RESTART_COUNT=1, resumes from that checkpoint and
# finishes every step; the per-step losses and the final parameters are bit-for-bit those of an uninterrupted
# run (h5diff is exact by default).
#
# Usage: preemption_requeue_test.sh SLUICE CONFIG START_SH STOP_SH MPI_RUNNER
# Needs apt packages slurmd slurmctld slurm-client munge hdf5-tools openmpi-bin. Runs as root or not.
set -euo pipefail
sluice="$(realpath "$1")"
config="$(realpath "$2")"
start_slurm="$(realpath "$3")"
stop_slurm="$(realpath "$4")"
mpi_runner="$(realpath "$5")"
steps="${SLUICE_TEST_STEPS:-2000}"  # long enough (several seconds) that the signal lands mid-run

# Short path: munge's and PMIx's Unix sockets live under it (108-byte limit).
work="$(mktemp -d /tmp/sl-slurm.XXXXXX)"
cleanup() {
  local status=$?
  "$stop_slurm" "$work/slurm" || true
  if [ "$status" -ne 0 ]; then
    echo "---- job log ----" >&2; cat "$work"/job/*.out "$work"/job/*.err >&2 2>/dev/null || true
    echo "---- submit ----" >&2; cat "$work/submit.log" >&2 2>/dev/null || true
    echo "---- slurmctld ----" >&2; tail -n 30 "$work/slurm/log/slurmctld.log" >&2 2>/dev/null || true
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir -p "$work/tmp"
# The job inherits this environment (sbatch --export=ALL): keep Open MPI's session files in a short, private dir.
export TMPDIR="$work/tmp"
# Shared-memory segments too: two private Slurms (checkouts tested at once) both run "job 1", and Open MPI names
# its /dev/shm segments after the job; a shared name crashed the other job's ranks in vader (seen, not guessed).
export OMPI_MCA_btl_vader_backing_directory="$work/tmp"
# 4 ranks share 2 cores here: without yielding, Open MPI ranks busy-poll each other off the CPU (mpirun
# --oversubscribe turns this on by itself; under srun Open MPI cannot tell it is oversubscribed).
export OMPI_MCA_mpi_yield_when_idle=1
SLUICE_SLURM_PORT=$((20000 + RANDOM % 10000)) "$start_slurm" "$work/slurm"
source "$work/slurm/env.sh"

common=(--set "steps=$steps" --set "checkpoint.every=$steps" --set checkpoint.keep=3)

# --- the preempted job ------------------------------------------------------------------------------------
timeout 240 "$sluice" submit "$config" --nodes 1 --time 00:05:00 --output-dir "$work/job" \
  --set "checkpoint.dir=$work/ckpt_slurm" "${common[@]}" --wait > "$work/submit.log" 2>&1 &
submit_pid=$!

job_id=""
for _ in $(seq 300); do
  job_id="$(sed -n 's/^Submitted batch job \([0-9][0-9]*\)$/\1/p' "$work/submit.log")"
  [ -n "$job_id" ] && break
  sleep 0.1
done
[ -n "$job_id" ] || fail "sbatch did not report a job id"
log="$work/job/sluice-$(basename "$config" .yaml)-$job_id.out"

# Signal only once training is under way, so the checkpoint lands strictly inside the run.
for _ in $(seq 1200); do
  [ "$(cat "$log" 2>/dev/null | grep -c '^step ')" -ge 20 ] && break
  kill -0 "$submit_pid" 2>/dev/null || fail "job ended before it was signalled"
  sleep 0.1
done
[ "$(grep -c '^step ' "$log")" -ge 20 ] || fail "training did not reach step 20 within 120 s"
scancel --batch --signal=USR1 "$job_id"

set +e
wait "$submit_pid"
submit_status=$?
set -e
[ "$submit_status" -eq 0 ] || fail "sluice submit --wait exited $submit_status"

# --- what the log must show ------------------------------------------------------------------------------
grep -q "SLURM_JOB_ID=$job_id SLURM_RESTART_COUNT=0" "$log" || fail "first run's header missing"
preempted_line="$(grep -E '^sluice: preempted: checkpoint .* written at step [0-9]+' "$log")" ||
  fail "no preemption checkpoint in the log"
stop_step="$(sed -E 's/.* written at step ([0-9]+).*/\1/' <<< "$preempted_line")"
[ "$stop_step" -gt 0 ] && [ "$stop_step" -lt "$steps" ] || fail "preempted at step $stop_step, not inside 1..$((steps - 1))"
grep -q "requeueing job $job_id" "$log" || fail "the batch script did not requeue"
grep -q "SLURM_JOB_ID=$job_id SLURM_RESTART_COUNT=1" "$log" || fail "no second run with SLURM_RESTART_COUNT=1"
grep -qE "^sluice: resumed from .* at step $stop_step\$" "$log" || fail "second run did not resume at step $stop_step"
grep -q "^step $steps " "$log" || fail "resumed run did not reach step $steps"
final_checkpoint="$(sed -n 's/^sluice: checkpoint \(.*\)$/\1/p' "$log" | tail -n 1)"
[ -f "$final_checkpoint" ] || fail "final checkpoint '$final_checkpoint' not found"

# --- the uninterrupted reference run ----------------------------------------------------------------------
"$mpi_runner" 4 "$sluice" train "$config" --set "checkpoint.dir=$work/ckpt_ref" "${common[@]}" > "$work/ref.log" 2>&1 ||
  { cat "$work/ref.log" >&2; fail "reference run failed"; }
reference_checkpoint="$(sed -n 's/^sluice: checkpoint \(.*\)$/\1/p' "$work/ref.log" | tail -n 1)"
[ -f "$reference_checkpoint" ] || fail "reference checkpoint '$reference_checkpoint' not found"

# Losses (printed to 9 significant digits) of steps 1..stop from the first run and stop+1..end from the
# second, against the reference's.
awk '/^step /{print $2, $4}' "$log" > "$work/losses.slurm"
awk '/^step /{print $2, $4}' "$work/ref.log" > "$work/losses.ref"
[ "$(wc -l < "$work/losses.ref")" -eq "$steps" ] || fail "reference printed $(wc -l < "$work/losses.ref") steps"
diff "$work/losses.ref" "$work/losses.slurm" > "$work/losses.diff" ||
  { head -n 20 "$work/losses.diff" >&2; fail "per-step losses differ from the uninterrupted run"; }

h5diff "$reference_checkpoint" "$final_checkpoint" /model /model ||
  fail "final parameters (/model) differ from the uninterrupted run"
h5diff "$reference_checkpoint" "$final_checkpoint" /optimizer /optimizer ||
  fail "final optimizer state differs from the uninterrupted run"

echo "PASS: preempted at step $stop_step of $steps, requeued (SLURM_RESTART_COUNT=1), resumed; losses and parameters identical"
