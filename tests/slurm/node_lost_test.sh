#!/bin/bash
# A node lost, on a real 2-node Slurm of namespace nodes (slurm/local/cluster_start.sh): the batch script of
# `sluice submit --nodes 1-2 --tasks-per-node 2` (whole nodes, srun --ntasks-per-node=2, pipeline.data_parallel
# left to the world size), trains examples/configs/mlp.yaml as 2 stages x 2 replicas over both nodes.
#   1. SIGTERM to the whole allocation (scancel): every rank on both nodes stops after the same step, that step's
#      checkpoint is written and verifies, the step exits 75 and the script does not requeue: nothing lost.
#   2. Node 2 dies mid-run (its PID 1 killed: its slurmd, munged, slurmstepd and both its ranks with it): the
#      ranks on node 1 give up after comm.timeout (10 s) and within comm.timeout + 30 s no rank is left and Slurm
#      has requeued the job (node failure; SlurmdTimeout=10); it runs again on node 1 alone as 2 stages x 1
#      replica, resumes from the latest checkpoint (which `sluice inspect` verifies), and finishes bit for bit
#      (losses, /model, /optimizer) like a run that checkpoints at that step with 4 ranks and resumes with 2.
#
# Usage: node_lost_test.sh SLUICE CONFIG CLUSTER_START CLUSTER_STOP
# Needs root (namespaces), util-linux, iproute2, slurmd slurmctld slurm-client munge, openmpi-bin, hdf5-tools.
# Without root or namespaces it fails under CI=true and says SKIPPED otherwise.
set -euo pipefail
sluice="$(realpath "$1")"
config="$(realpath "$2")"
cluster_start="$(realpath "$3")"
cluster_stop="$(realpath "$4")"
readonly steps=400 every=50 comm_timeout=10

# shellcheck source=tests/slurm/cluster_test_lib.sh
source "$(dirname "$0")/cluster_test_lib.sh"
require_namespaces h5diff

work="$(mktemp -d /tmp/sl-lost.XXXXXX)"
cluster="$work/cluster"
cleanup() {
  local status=$?
  "$cluster_stop" "$cluster" || true
  if [ "$status" -ne 0 ]; then
    for f in "$work"/job/*.out "$work"/job/*.err "$work"/*.log; do
      [ -f "$f" ] && { echo "---- $f ----"; grep -v '^step ' "$f" | tail -n 40; }
    done >&2
    tail -n 20 "$cluster"/log/slurmctld.log >&2 2>/dev/null || true
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

started=$(date +%s)
start_test_cluster "$cluster_start" "$cluster" 2

# The batch script `sluice submit --nodes 1-2 --tasks-per-node 2` writes: whole nodes and no task count (Slurm
# records a requeued job's task count from its first allocation and would wait for 2 nodes), srun starting 2
# ranks on each node the job got.
make_script() {  # make_script CHECKPOINT_DIR SCRIPT
  mkdir -p "$work/job"
  "$sluice" submit "$config" --nodes 1-2 --tasks-per-node 2 --output-dir "$work/job" --dry-run \
    --set pipeline.stages=2 --set "steps=$steps" --set "checkpoint.dir=$1" --set "checkpoint.every=$every" \
    --set checkpoint.keep=100 --set "comm.timeout=$comm_timeout" > "$2" 2>"$work/submit.log" ||
    fail "sluice submit --nodes 1-2: $(cat "$work/submit.log")"
  # The plugin for the MPI this sluice is linked with, chosen by submit itself.
  grep -q -- "srun $(srun_mpi_option) " "$2" || fail "submit's job step is not srun $(srun_mpi_option): $(grep srun "$2")"
}
submit() { sbatch --parsable "$1" | cut -d';' -f1; }
log_of() { echo "$work/job/sluice-$(basename "$config" .yaml)-$1.out"; }
steps_in() { cat "$1" 2>/dev/null | grep -c '^step ' || true; }
wait_for_steps() {  # wait_for_steps LOG N: until the log shows N steps (60 s at most)
  for _ in $(seq 600); do [ "$(steps_in "$1")" -ge "$2" ] && return 0; sleep 0.1; done
  fail "$1 did not reach step $2 within 60 s"
}
wait_gone() {  # wait_gone JOB SECONDS: until the job has left the queue
  for _ in $(seq $(($2 * 5))); do [ -z "$(squeue -h -j "$1" 2>/dev/null)" ] && return 0; sleep 0.2; done
  fail "job $1 still in the queue after $2 s: $(squeue -h -j "$1" -o '%T %R' 2>&1)"
}
ranks_running() { pgrep -f -c -- "$sluice train" || true; }

# --- 1. SIGTERM to the whole allocation ------------------------------------------------------------------
make_script "$work/ckpt_term" "$work/term.sbatch"
job="$(submit "$work/term.sbatch")"
log="$(log_of "$job")"
wait_for_steps "$log" 20
grep -q 'nodes=node\[1-2\]' "$log" || fail "job $job did not get both nodes: $(head -n 1 "$log")"
scancel "$job"
wait_gone "$job" 60
line="$(grep -E '^sluice: preempted: checkpoint .* written at step [0-9]+' "$log")" ||
  fail "SIGTERM: no checkpoint written"
stop_step="$(sed -E 's/.* written at step ([0-9]+).*/\1/' <<<"$line")"
last_step="$(awk '/^step /{n = $2} END {print n}' "$log")"
[ "$stop_step" = "$last_step" ] || fail "SIGTERM: checkpoint at step $stop_step, but step $last_step was done"
grep -q "not requeueing job $job" "$log" || fail "SIGTERM: the script did not stop with 75 without requeueing"
"$sluice" inspect "$work/ckpt_term" > "$work/inspect_term.log" 2>&1 || fail "SIGTERM: the checkpoint does not verify"
echo "SIGTERM to both nodes: all ranks stopped after step $stop_step, its checkpoint verifies, exit 75, not requeued"

# --- 2. node 2 lost --------------------------------------------------------------------------------------
make_script "$work/ckpt_lost" "$work/lost.sbatch"
job="$(submit "$work/lost.sbatch")"
log="$(log_of "$job")"
wait_for_steps "$log" $((2 * every + 10))
grep -q 'nodes=node\[1-2\]' "$log" || fail "job $job did not get both nodes"
lost_at=$(date +%s)
kill -KILL "$(cat "$cluster/pids/node2.init")"
ended=""
for _ in $(seq $(((comm_timeout + 40) * 5))); do
  restarts="$(scontrol show job "$job" 2>/dev/null | sed -n 's/.*Restarts=\([0-9]*\).*/\1/p')"
  if [ "$(ranks_running)" -eq 0 ] && [ "${restarts:-0}" -ge 1 ]; then ended=$(($(date +%s) - lost_at)); break; fi
  sleep 0.2
done
[ -n "$ended" ] || fail "$((comm_timeout + 40)) s after node 2 was lost: ranks still running or the job not requeued"
[ "$ended" -le $((comm_timeout + 30)) ] ||
  fail "the job ended ${ended} s after node 2 was lost, more than comm.timeout + 30 s"
echo "node 2 lost: no rank left and the job requeued after ${ended} s"
wait_gone "$job" 120

grep -q "SLURM_RESTART_COUNT=1 nodes=node1 " "$log" || fail "no second run on node1 alone"
grep -q '^sluice: 2 ranks = 1 data-parallel x 2 pipeline ranks' "$log" || fail "the second run is not 2 stages x 1 replica"
resumed="$(sed -n 's/^sluice: resumed from \(.*\) at step \([0-9]*\)$/\1 \2/p' "$log")"
read -r resumed_from resume_step <<<"$resumed"
[ -n "${resume_step:-}" ] || fail "the second run did not resume"
latest="$(sed -n '/SLURM_RESTART_COUNT=1/q; s/^sluice: checkpoint \(.*\)$/\1/p' "$log" | tail -n 1)"
[ "$resumed_from" = "$latest" ] || fail "resumed from $resumed_from, not from the latest checkpoint $latest"
"$sluice" inspect "$resumed_from" > "$work/inspect_lost.log" 2>&1 || fail "the checkpoint resumed from does not verify"
grep -q "^step $steps " "$log" || fail "the resumed run did not reach step $steps"
final="$(sed -n 's/^sluice: checkpoint \(.*\)$/\1/p' "$log" | tail -n 1)"

# --- the reference: 4 ranks checkpoint at the same step, 2 ranks resume ----------------------------------
reference=(--set pipeline.stages=2 --set "checkpoint.dir=$work/ckpt_ref" --set "comm.timeout=$comm_timeout")
timeout 120 srun "$(srun_mpi_option)" --nodes=1 --nodelist=node1 --ntasks=4 "$sluice" train "$config" "${reference[@]}" \
  --set "steps=$resume_step" --set "checkpoint.every=$resume_step" > "$work/ref1.log" 2>&1 || fail "reference, 4 ranks"
timeout 120 srun "$(srun_mpi_option)" --nodes=1 --nodelist=node1 --ntasks=2 "$sluice" train "$config" "${reference[@]}" \
  --set "steps=$steps" --set "checkpoint.every=$every" --auto-resume > "$work/ref2.log" 2>&1 || fail "reference, 2 ranks"
reference_final="$(sed -n 's/^sluice: checkpoint \(.*\)$/\1/p' "$work/ref2.log" | tail -n 1)"
# The resumed run's losses: the step lines after its header (the lost run printed some of the same steps).
awk '/SLURM_RESTART_COUNT=1/ {resumed = 1} resumed && /^step / {print $2, $4}' "$log" > "$work/losses.job"
awk '/^step /{print $2, $4}' "$work/ref2.log" > "$work/losses.ref"
[ "$(wc -l < "$work/losses.ref")" -eq $((steps - resume_step)) ] || fail "the reference resumed at another step"
diff "$work/losses.ref" "$work/losses.job" > /dev/null || fail "losses after the resume differ from the reference"
h5diff "$reference_final" "$final" /model /model || fail "final parameters differ from the reference"
h5diff "$reference_final" "$final" /optimizer /optimizer || fail "final optimizer state differs from the reference"

echo "PASS: SIGTERM stopped both nodes at step $stop_step with a verified checkpoint and 75; node 2 lost at step" \
  ">= $((2 * every + 10)): ranks gone and job requeued after ${ended} s, resumed on node1 as 2 x 1 from step" \
  "$resume_step, finished bit for bit like the 4 -> 2 rank reference ($(($(date +%s) - started)) s)"
