#!/bin/bash
# `sluice submit --program` on a real single-node Slurm, with a C program that owns its loop
# (examples/c/own_loop.c, built here against the installed tree as a user would):
#   1. scancel (SIGTERM to every task) mid-run: the ranks write their checkpoint before exiting 75, the batch
#      script says it will not requeue, and the job ends CANCELLED and leaves the queue (no requeue).
#   2. Resubmitting the same command resumes from that checkpoint (first step > 0) and finishes.
#   3. Preemption (`scancel --batch --signal=USR1`) of a fresh job: checkpoint, exit 75, requeued with
#      SLURM_RESTART_COUNT=1, resumed, finished.
#
# Usage: program_cancel_test.sh SLUICE INSTALL_SH TARBALL OWN_LOOP_C START_SH STOP_SH
set -euo pipefail
sluice="$(realpath "$1")"
install_sh="$(realpath "$2")"
tarball="$(realpath "$3")"
source_c="$(realpath "$4")"
start_slurm="$(realpath "$5")"
stop_slurm="$(realpath "$6")"
steps=400
delay_ms=20  # ~8 s of steps per run on an idle machine: the signals land mid-run

work="$(mktemp -d /tmp/sl-prog.XXXXXX)"
# cleanup/fail/poll and the job queries (cancel_test_lib.sh)
source "$(dirname "$0")/cancel_test_lib.sh"
job_id_of() { sed -n 's/^Submitted batch job \([0-9][0-9]*\)$/\1/p' "$1"; }

# --- the program, built against the installed library ----------------------------------------------------
bash "$install_sh" "$tarball" "$work/prefix" > /dev/null
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
mkdir -p "$work/bin" "$work/tmp" "$work/run dir"
# shellcheck disable=SC2046  # pkg-config output is a list of flags
cc -O2 -std=c99 -Wall $(pkg-config --cflags sluice) -o "$work/bin/own_loop" "$source_c" \
  $(pkg-config --libs sluice) -Wl,-rpath,"$work/prefix/lib" -lm 2> "$work/cc.log" ||
  fail "own_loop.c did not build against the installed tree: $(cat "$work/cc.log")"

cat > "$work/own_loop.yaml" <<EOF
model:
  inputs: 8
  layers:
    - {type: linear, outputs: 16}
    - {type: tanh}
    - {type: linear, outputs: 4}
pipeline: {stages: 2, schedule: 1f1b, microbatches: 2}
loss: mse
optimizer: {type: adamw, lr: 0.01}
data: {type: external, batch: 32}
checkpoint: {dir: $work/ckpt, every: 0, keep: 3}
seed: 7
EOF

export TMPDIR="$work/tmp"
# Shared-memory segments too: two private Slurms (checkouts tested at once) both run "job 1", and Open MPI names
# its /dev/shm segments after the job; a shared name crashed the other job's ranks in vader (seen, not guessed).
export OMPI_MCA_btl_vader_backing_directory="$work/tmp"
export OMPI_MCA_mpi_yield_when_idle=1
SLUICE_SLURM_PORT=$((20000 + RANDOM % 10000)) "$start_slurm" "$work/slurm"
source "$work/slurm/env.sh"

# A relative --program path (made absolute by submit), and a config given with --config; the run directory
# has a space in it. The delay argument is passed through the script's quoting.
submit() {
  (cd "$work" && "$sluice" submit --program bin/own_loop --config own_loop.yaml --nodes 1 --time 00:05:00 \
     --output-dir "$work/job" --job-name "$1" "${@:2}" -- "$steps" "$delay_ms")
}

# --- 1. scancel mid-run ----------------------------------------------------------------------------------
submit cancelled > "$work/submit1.log" 2>&1 || fail "submit exited $?"
job1="$(job_id_of "$work/submit1.log")"
[ -n "$job1" ] || fail "sbatch did not report a job id"
log1="$work/job/cancelled-$job1.out"
poll 90 has_steps "$log1" 10 || fail "the program did not reach step 10 within 90 s"
scancel "$job1"
# COMPLETING while the ranks checkpoint (up to KillWait), then CANCELLED for MinJobAge (5 s), then gone.
is_cancelled() { [ "$(job_state "$job1")" = CANCELLED ]; }
poll 60 is_cancelled || fail "job $job1 did not end CANCELLED (state '$(job_state "$job1")')"
poll 60 job_gone "$job1" || fail "cancelled job $job1 still known to Slurm after 60 s (state $(job_state "$job1"))"

grep -q '^own_loop: first step 1$' "$log1" || fail "first run did not start fresh"
stop_line="$(grep -E '^own_loop: stopped after step [0-9]+ \(checkpoint written\)$' "$log1")" ||
  fail "the program did not stop with a checkpoint on SIGTERM"
stop_step="$(sed -E 's/.*after step ([0-9]+).*/\1/' <<< "$stop_line")"
[ "$stop_step" -gt 0 ] && [ "$stop_step" -lt "$steps" ] || fail "stopped at step $stop_step, not inside the run"
checkpoint="$(printf '%s/ckpt/ckpt_%08d.h5' "$work" "$stop_step")"
[ -f "$checkpoint" ] || fail "no checkpoint $checkpoint (have: $(ls "$work/ckpt" 2>/dev/null))"
grep -q "SIGTERM received" "$log1" || fail "the batch script did not log the SIGTERM"
grep -q "not requeueing job $job1" "$log1" || fail "the batch script did not say it leaves the job cancelled"
! grep -q "requeueing job $job1\$" "$log1" || fail "the cancelled job was requeued"
! grep -q "SLURM_RESTART_COUNT=1" "$log1" || fail "the cancelled job ran again"

# --- 2. resubmit: resumes from the scancel checkpoint ----------------------------------------------------
submit resubmitted --wait > "$work/submit2.log" 2>&1 || fail "resubmitted job: sluice submit --wait exited $?"
job2="$(job_id_of "$work/submit2.log")"
log2="$work/job/resubmitted-$job2.out"
grep -q "^own_loop: first step $((stop_step + 1))\$" "$log2" ||
  fail "resubmitted job did not resume after step $stop_step: $(grep '^own_loop: first' "$log2")"
grep -q "^own_loop: finished $steps steps\$" "$log2" || fail "resubmitted job did not finish"

# --- 3. preemption warning (USR1 to the batch shell): requeued, resumed -----------------------------------
rm -rf "$work/ckpt"
submit preempted --wait > "$work/submit3.log" 2>&1 &
submit3_pid=$!
poll 30 grep -q '^Submitted batch job' "$work/submit3.log" || fail "third submit reported no job id"
job3="$(job_id_of "$work/submit3.log")"
log3="$work/job/preempted-$job3.out"
poll 90 has_steps "$log3" 10 || fail "the preempted job did not reach step 10 within 90 s"
scancel --batch --signal=USR1 "$job3"
set +e
wait "$submit3_pid"
submit3_status=$?
set -e
[ "$submit3_status" -eq 0 ] || fail "preempted job: sluice submit --wait exited $submit3_status"
grep -q "requeueing job $job3\$" "$log3" || fail "the preempted job was not requeued"
grep -q "SLURM_JOB_ID=$job3 SLURM_RESTART_COUNT=1" "$log3" || fail "no second run with SLURM_RESTART_COUNT=1"
pre_line="$(grep -E '^own_loop: stopped after step [0-9]+' "$log3")" || fail "preempted run did not stop with a checkpoint"
pre_step="$(sed -E 's/.*after step ([0-9]+).*/\1/' <<< "$pre_line")"
grep -q "^own_loop: first step $((pre_step + 1))\$" "$log3" || fail "requeued run did not resume after step $pre_step"
grep -q "^own_loop: finished $steps steps\$" "$log3" || fail "requeued run did not finish"

echo "PASS: scancel at step $stop_step -> checkpoint, CANCELLED, not requeued; resubmitted -> resumed at" \
  "$((stop_step + 1)), finished; USR1 at step $pre_step -> requeued, resumed, finished"
