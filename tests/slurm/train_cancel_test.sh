#!/bin/bash
# `scancel` of a `sluice train` job on a real single-node Slurm (the signal rules of docs/SLURM.md, "Signals"):
# SIGTERM reaches every task; the ranks agree on a step, write one complete checkpoint that verifies, and exit
# 75; the batch script logs that it will not requeue and exits 75; the job ends CANCELLED, leaves the queue and
# never runs again. (The preemption side, SIGUSR1 -> requeue -> resume, is preemption_requeue_test.)
#
# Usage: train_cancel_test.sh SLUICE CONFIG START_SH STOP_SH
set -euo pipefail
sluice="$(realpath "$1")"
config="$(realpath "$2")"
start_slurm="$(realpath "$3")"
stop_slurm="$(realpath "$4")"

work="$(mktemp -d /tmp/sl-tcan.XXXXXX)"
# cleanup/fail/poll and the job queries (cancel_test_lib.sh)
source "$(dirname "$0")/cancel_test_lib.sh"

mkdir -p "$work/tmp"
export TMPDIR="$work/tmp" OMPI_MCA_btl_vader_backing_directory="$work/tmp" OMPI_MCA_mpi_yield_when_idle=1
SLUICE_SLURM_PORT=$((20000 + RANDOM % 10000)) "$start_slurm" "$work/slurm"
source "$work/slurm/env.sh"

# Far more steps than the test waits for: only the signal ends this job.
"$sluice" submit "$config" --nodes 1 --time 00:05:00 --output-dir "$work/job" --job-name cancelled \
  --set checkpoint.dir="$work/ckpt" --set steps=1000000 > "$work/submit.log" 2>&1 || fail "submit exited $?"
job="$(sed -n 's/^Submitted batch job \([0-9][0-9]*\)$/\1/p' "$work/submit.log")"
[ -n "$job" ] || fail "sbatch did not report a job id"
log="$work/job/cancelled-$job.out"
poll 90 has_steps "$log" 20 || fail "training did not reach step 20 within 90 s"
scancel "$job"
# COMPLETING while the ranks checkpoint (up to KillWait), then CANCELLED for MinJobAge (5 s), then gone.
is_cancelled() { [ "$(job_state "$job")" = CANCELLED ]; }
poll 60 is_cancelled || fail "job $job did not end CANCELLED (state '$(job_state "$job")')"
poll 60 job_gone "$job" || fail "cancelled job $job still known to Slurm after 60 s (state $(job_state "$job"))"
# A requeued job would be back within ~6 s (cred_expire=5): give it that chance to show.
sleep 8
[ -z "$(squeue -h -j "$job" 2>/dev/null)" ] || fail "cancelled job $job is in the queue again"

stop_line="$(grep -E '^sluice: preempted: checkpoint .* written at step [0-9]+' "$log")" ||
  fail "the ranks did not write a checkpoint on SIGTERM"
checkpoint="$(sed -E 's/^sluice: preempted: checkpoint (.*) written at step.*/\1/' <<< "$stop_line")"
[ -f "$checkpoint" ] || fail "checkpoint $checkpoint not found (have: $(ls -a "$work/ckpt"))"
[ -z "$(find "$work/ckpt" -name '*.tmp*')" ] || fail "a temporary checkpoint was left: $(ls -a "$work/ckpt")"
"$sluice" inspect "$checkpoint" > "$work/inspect.log" 2>&1 || fail "inspect failed on $checkpoint"
grep -q "checksums: .*all [0-9]* verified" "$work/inspect.log" || fail "checkpoint checksums not verified"
grep -q "exiting with 75" "$log" || fail "the ranks did not exit 75"
grep -q "SIGTERM received" "$log" || fail "the batch script did not log the SIGTERM"
grep -q "not requeueing job $job" "$log" || fail "the batch script did not say it leaves the job cancelled"
! grep -q "requeueing job $job\$" "$log" || fail "the cancelled job was requeued"
! grep -q "SLURM_RESTART_COUNT=1" "$log" || fail "the cancelled job ran again"
echo "PASS: scancel -> $(basename "$checkpoint") verified, exit 75, CANCELLED, not requeued"
