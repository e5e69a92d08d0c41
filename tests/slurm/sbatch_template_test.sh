#!/bin/bash
# The generated batch script's own logic, without Slurm: `srun` and `scontrol` are stand-ins on PATH that
# record how they were called. Checks that USR1 reaching the batch shell is forwarded to the job step, that
# exit 75 leads to `scontrol requeue $SLURM_JOB_ID` and exit 0, and that other statuses pass through, also
# when srun ends right after USR1 interrupted the batch shell's `wait` (the race bash loses statuses in).
# The same for a `--nodes MIN-MAX` script (whole nodes, srun --ntasks-per-node). Also checks `sluice submit`'s
# error exits (bad task fit -> 2, bad node ranges -> 2, no checkpoint.dir -> 2, no sbatch on PATH -> 1) and its
# warning when checkpoint.every is 0.
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
# With FAKE_SRUN_RACE_EXIT set it instead sends USR1 to the batch shell itself and exits at once with that
# status, so it ends while the batch shell is in its trap or just back in its wait loop.
echo "$*" > "$RECORD_DIR/srun.args"
printf '%s\n' "$@" > "$RECORD_DIR/srun.argv"  # one argument per line: shows how the script quoted them
if [ -n "${FAKE_SRUN_RACE_EXIT:-}" ]; then
  trap 'echo USR1 >> "$RECORD_DIR/srun.signals"' USR1
  for _ in $(seq 100); do [ -s "$RECORD_DIR/batch.pid" ] && break; sleep 0.05; done
  kill -USR1 "$(cat "$RECORD_DIR/batch.pid")"
  exit "$FAKE_SRUN_RACE_EXIT"
fi
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
  --output-dir "$work/logs" --set steps=7 --set checkpoint.dir=/scratch/ck --set checkpoint.every=5 \
  > "$work/job.sbatch" 2> "$work/dry-run.err"
[ ! -s "$work/dry-run.err" ] || fail "submit with checkpoint.every=5 printed: $(cat "$work/dry-run.err")"
bash -n "$work/job.sbatch" || fail "generated script is not valid bash"
grep -qx '#SBATCH --ntasks=4' "$work/job.sbatch" || fail "mlp.yaml has 4 stages: expected --ntasks=4"

# Repeatable options written before the config file take one value each (the file stays the positional), and
# --sbatch-option / --warning-seconds reach the script.
"$sluice" submit --set checkpoint.dir=/scratch/ck --sbatch-option qos=long --sbatch-option mem=0 "$config" \
  --nodes 1 --dry-run --sluice /opt/fake/sluice --output-dir "$work/logs" --warning-seconds 300 \
  > "$work/options.sbatch" 2> "$work/options.err" || fail "options before the config file: $(cat "$work/options.err")"
for line in '#SBATCH --qos=long' '#SBATCH --mem=0' '#SBATCH --signal=B:USR1@300'; do
  grep -qxF -- "$line" "$work/options.sbatch" || fail "submit --sbatch-option/--warning-seconds: no line '$line'"
done

# Runs the batch script with the stand-ins; $1: "signal" to send USR1 once the step runs, "finish", "term"
# (SIGTERM to the batch shell, then the step finishes with FAKE_SRUN_EXIT), or
# "race" (the stand-in srun signals the batch shell and exits by itself, see FAKE_SRUN_RACE_EXIT).
run_case() {
  local how="$1"
  export RECORD_DIR="$(mktemp -d "$work/case.XXXXXX")"
  SLURM_JOB_ID=4242 PATH="$work/bin:$PATH" bash "$job_script" > "$RECORD_DIR/batch.out" 2>&1 &
  local batch_pid=$!
  echo "$batch_pid" > "$RECORD_DIR/batch.pid"
  if [ "$how" = race ]; then
    set +e
    wait "$batch_pid"
    status=$?
    set -e
    return
  fi
  for _ in $(seq 100); do [ -f "$RECORD_DIR/srun.started" ] && break; sleep 0.1; done
  [ -f "$RECORD_DIR/srun.started" ] || fail "stand-in srun never started"
  if [ "$how" = signal ]; then
    kill -USR1 "$batch_pid"
  elif [ "$how" = term ]; then
    # scancel: SIGTERM (Slurm also signals the ranks itself); the step then ends with its checkpoint (75).
    kill -TERM "$batch_pid"
    for _ in $(seq 100); do grep -q "SIGTERM received" "$RECORD_DIR/batch.out" && break; sleep 0.1; done
    grep -q "SIGTERM received" "$RECORD_DIR/batch.out" || fail "the batch script did not log SIGTERM"
    touch "$RECORD_DIR/srun.finish"
  else
    touch "$RECORD_DIR/srun.finish"
  fi
  set +e
  wait "$batch_pid"
  status=$?
  set -e
}

job_script="$work/job.sbatch"

# 1. Preemption: USR1 to the batch shell -> forwarded -> step exits 75 -> requeue, exit 0.
run_case signal
[ "$status" -eq 0 ] || fail "preempted job: batch script exited $status, expected 0 (requeued)"
[ "$(cat "$RECORD_DIR/srun.signals")" = USR1 ] || fail "USR1 was not forwarded to the job step"
[ "$(cat "$RECORD_DIR/scontrol.args")" = "requeue 4242" ] || fail "expected 'scontrol requeue 4242', got '$(cat "$RECORD_DIR/scontrol.args" 2>/dev/null)'"
[ "$(cat "$RECORD_DIR/srun.args")" = "--mpi=pmix /opt/fake/sluice train $config --auto-resume --set steps=7 --set checkpoint.dir=/scratch/ck --set checkpoint.every=5" ] ||
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

# 5. srun ends right after USR1 reached the batch shell. Whether the exit lands before, during or after the
# interrupted `wait` is up to the scheduler, so try many times: the step's own status must always win.
for attempt in $(seq 25); do
  FAKE_SRUN_RACE_EXIT=75 run_case race
  [ "$status" -eq 0 ] || fail "srun exited 75 right after the signal (attempt $attempt): batch script exited $status, expected 0 (requeued); log: $(cat "$RECORD_DIR/batch.out")"
  [ "$(cat "$RECORD_DIR/scontrol.args" 2>/dev/null)" = "requeue 4242" ] || fail "srun exited 75 right after the signal (attempt $attempt): not requeued"
  FAKE_SRUN_RACE_EXIT=0 run_case race
  [ "$status" -eq 0 ] || fail "srun finished right after the signal (attempt $attempt): batch script exited $status, expected 0; log: $(cat "$RECORD_DIR/batch.out")"
  [ ! -f "$RECORD_DIR/scontrol.args" ] || fail "srun finished right after the signal (attempt $attempt): requeued"
done

# 6. The GPU template has the same forwarding and waiting logic: preemption and the race once more.
"$sluice" submit "$config" --nodes 1 --gpus --dry-run --sluice /opt/fake/sluice --output-dir "$work/logs" \
  --set device=cuda --set checkpoint.dir=/scratch/ck > "$work/gpu.sbatch" 2> /dev/null
grep -qx '#SBATCH --gpus-per-task=1' "$work/gpu.sbatch" || fail "--gpus did not use the GPU template"
job_script="$work/gpu.sbatch"
run_case signal
[ "$status" -eq 0 ] && [ "$(cat "$RECORD_DIR/srun.signals")" = USR1 ] || fail "GPU template: preemption not forwarded/requeued (exit $status)"
for attempt in $(seq 10); do
  FAKE_SRUN_RACE_EXIT=75 run_case race
  [ "$status" -eq 0 ] && [ -f "$RECORD_DIR/scontrol.args" ] || fail "GPU template: srun exited 75 right after the signal (attempt $attempt): exit $status"
done

# 7. scancel: SIGTERM to the batch shell, the step exits 75 with its checkpoint. Not requeued (a cancelled job
# is COMPLETING, and Slurm would accept `scontrol requeue` then), exit 75, and the log says so. Both templates.
for job_script in "$work/job.sbatch" "$work/gpu.sbatch"; do
  FAKE_SRUN_EXIT=75 run_case term
  [ "$status" -eq 75 ] || fail "$job_script: SIGTERM then 75: batch script exited $status, expected 75"
  [ ! -f "$RECORD_DIR/scontrol.args" ] || fail "$job_script: a job ended by SIGTERM (scancel) was requeued"
  grep -q "not requeueing job 4242 (a cancelled job stays cancelled)" "$RECORD_DIR/batch.out" ||
    fail "$job_script: no 'not requeueing' line: $(cat "$RECORD_DIR/batch.out")"
  FAKE_SRUN_EXIT=0 run_case term
  [ "$status" -eq 0 ] && [ ! -f "$RECORD_DIR/scontrol.args" ] || fail "$job_script: SIGTERM then 0: exit $status"
done

# 7. --nodes MIN-MAX (a job a requeue can shrink): whole nodes, no task count, srun starts the ranks per node;
# the forwarding and requeue logic is the same.
"$sluice" submit "$config" --nodes 1-2 --tasks-per-node 4 --dry-run --sluice /opt/fake/sluice \
  --output-dir "$work/logs" --set checkpoint.dir=/scratch/ck > "$work/range.sbatch" 2> /dev/null ||
  fail "--nodes 1-2 --tasks-per-node 4 refused"
grep -qx '#SBATCH --nodes=1-2' "$work/range.sbatch" && grep -qx '#SBATCH --exclusive' "$work/range.sbatch" &&
  ! grep -q '^#SBATCH --ntasks' "$work/range.sbatch" || fail "--nodes 1-2: directives: $(grep '^#SBATCH' "$work/range.sbatch")"
job_script="$work/range.sbatch"
run_case signal
[ "$status" -eq 0 ] && [ "$(cat "$RECORD_DIR/scontrol.args")" = "requeue 4242" ] ||
  fail "--nodes 1-2: preemption not forwarded/requeued (exit $status)"
[ "$(cat "$RECORD_DIR/srun.args")" = "--mpi=pmix --ntasks-per-node=4 /opt/fake/sluice train $config --auto-resume --set checkpoint.dir=/scratch/ck" ] ||
  fail "--nodes 1-2: unexpected srun command line: $(cat "$RECORD_DIR/srun.args")"

# 8. --mpi: srun's MPI plugin (default: the one for the MPI this sluice is linked with, pmix for Open MPI; MPICH's
# ranks need pmi2); an unknown plugin is refused naming the option and the choices.
"$sluice" submit "$config" --nodes 1 --mpi pmi2 --dry-run --sluice /opt/fake/sluice --output-dir "$work/logs" \
  --set checkpoint.dir=/scratch/ck > "$work/pmi2.sbatch" 2> "$work/pmi2.err" || fail "--mpi pmi2 refused: $(cat "$work/pmi2.err")"
grep -q '^  srun --mpi=pmi2 "$sluice" train' "$work/pmi2.sbatch" || fail "--mpi pmi2: $(grep srun "$work/pmi2.sbatch")"
if "$sluice" submit "$config" --nodes 1 --mpi pmi3 --dry-run --set checkpoint.dir=/scratch/ck > /dev/null \
  2> "$work/pmi3.err"; then
  fail "--mpi pmi3 accepted"
fi
grep -q -- '--mpi "pmi3": unknown srun MPI plugin; expected pmix or pmi2' "$work/pmi3.err" ||
  fail "--mpi pmi3: $(cat "$work/pmi3.err")"

# --- sluice submit --program: the user's own program in the same template ------------------------------
# A relative program path (made absolute from the submit directory), a config given with --config, and
# arguments with spaces, quotes, $ and a leading dash (after --): each must reach the program unchanged.
mkdir -p "$work/sim dir"
printf '#!/bin/sh\n' > "$work/sim dir/my_sim"
chmod +x "$work/sim dir/my_sim"
# mlp.yaml has no checkpoint.dir, and a --program job takes no --set: the copy gets one.
sed 's|^checkpoint: .*|checkpoint: {dir: /scratch/ck, every: 5, keep: 3}|' "$config" > "$work/sim dir/cfg.yaml"
(cd "$work/sim dir" && "$sluice" submit --program ./my_sim --config cfg.yaml --nodes 1 --dry-run \
  --output-dir "$work/logs" -- --steps 7 "two words" "it's" 'say "hi"' '$HOME' '' > "$work/program.sbatch" \
  2> "$work/program.err") || fail "submit --program --dry-run failed: $(cat "$work/program.err")"
bash -n "$work/program.sbatch" || fail "generated --program script is not valid bash"
grep -qx "program='$work/sim dir/my_sim'" "$work/program.sbatch" || fail "program path not absolute: $(grep '^program=' "$work/program.sbatch")"
grep -qx "export SLUICE_CONFIG='$work/sim dir/cfg.yaml'" "$work/program.sbatch" || fail "SLUICE_CONFIG not exported"
job_script="$work/program.sbatch"
run_case signal
[ "$status" -eq 0 ] || fail "--program preempted: batch script exited $status, expected 0 (requeued)"
[ "$(cat "$RECORD_DIR/srun.signals")" = USR1 ] || fail "--program: USR1 was not forwarded to the job step"
[ "$(cat "$RECORD_DIR/scontrol.args")" = "requeue 4242" ] || fail "--program: preempted job not requeued"
printf '%s\n' --mpi=pmix "$work/sim dir/my_sim" --steps 7 "two words" "it's" 'say "hi"' '$HOME' '' > "$work/expected.argv"
diff "$work/expected.argv" "$RECORD_DIR/srun.argv" || fail "--program: the program's arguments did not arrive unchanged"
FAKE_SRUN_EXIT=3 run_case finish
[ "$status" -eq 3 ] && [ ! -f "$RECORD_DIR/scontrol.args" ] || fail "--program failed step: exit $status"
FAKE_SRUN_EXIT=75 run_case term
[ "$status" -eq 75 ] && [ ! -f "$RECORD_DIR/scontrol.args" ] || fail "--program scancel: exit $status or requeued"
for attempt in $(seq 10); do
  FAKE_SRUN_RACE_EXIT=75 run_case race
  [ "$status" -eq 0 ] && [ -f "$RECORD_DIR/scontrol.args" ] || fail "--program: srun exited 75 right after the signal (attempt $attempt): exit $status"
done

set +e
"$sluice" submit --program "$work/sim dir/my_sim" --nodes 1 --dry-run > /dev/null 2> "$work/noconfig.err"
noconfig_status=$?
"$sluice" submit --program "$work/sim dir/my_sim" --config "$work/sim dir/cfg.yaml" --nodes 1 --dry-run \
  --set steps=3 > /dev/null 2> "$work/progset.err"
progset_status=$?
"$sluice" submit --program "$work/nonexistent" --config "$work/sim dir/cfg.yaml" --nodes 1 --dry-run \
  > /dev/null 2> "$work/noprog.err"
noprog_status=$?
"$sluice" submit "$config" extra --nodes 1 --dry-run --set checkpoint.dir=/scratch/ck > /dev/null 2> "$work/extra.err"
extra_status=$?
set -e
[ "$noconfig_status" -eq 2 ] && grep -q -- "--program needs --config" "$work/noconfig.err" ||
  fail "--program without --config: exit $noconfig_status: $(cat "$work/noconfig.err")"
[ "$progset_status" -eq 2 ] && grep -q -- "--set overrides are arguments of \`sluice train\`" "$work/progset.err" ||
  fail "--program with --set: exit $progset_status: $(cat "$work/progset.err")"
[ "$noprog_status" -eq 2 ] && grep -q "is not an executable file" "$work/noprog.err" ||
  fail "missing --program: exit $noprog_status: $(cat "$work/noprog.err")"
[ "$extra_status" -eq 2 ] || fail "train with an extra argument: exit $extra_status: $(cat "$work/extra.err")"

# --- sluice submit's own errors ------------------------------------------------------------------------
with_dir=(--set checkpoint.dir=/scratch/ck)
set +e
"$sluice" submit "$config" --nodes 1 --tasks-per-node 2 --dry-run "${with_dir[@]}" > /dev/null 2> "$work/fit.err"
fit_status=$?
(cd "$work" && PATH=/nonexistent "$sluice" submit "$config" --nodes 1 --output-dir "$work/nosbatch" "${with_dir[@]}" \
  > /dev/null 2> "$work/nosbatch.err")
nosbatch_status=$?
"$sluice" submit "$config" --nodes 1 --dry-run > "$work/nodir.out" 2> "$work/nodir.err"
nodir_status=$?
"$sluice" submit "$config" --nodes 1 --dry-run --set checkpoint.dir=/scratch/ck --set checkpoint.dir= \
  > /dev/null 2> "$work/emptied.err"
emptied_status=$?
"$sluice" submit "$config" --nodes 1 --dry-run "${with_dir[@]}" > "$work/every0.out" 2> "$work/every0.err"
every0_status=$?
"$sluice" submit "$config" --nodes 2-1 --dry-run "${with_dir[@]}" > /dev/null 2> "$work/range21.err"
range21_status=$?
"$sluice" submit "$config" --nodes 1-two --dry-run "${with_dir[@]}" > /dev/null 2> "$work/rangebad.err"
rangebad_status=$?
"$sluice" submit "$config" --nodes 1-2 --tasks-per-node 2 --dry-run "${with_dir[@]}" > /dev/null 2> "$work/rangefit.err"
rangefit_status=$?
set -e
[ "$range21_status" -eq 2 ] && grep -q -- '--nodes 2-1: MIN (2) is more than MAX (1)' "$work/range21.err" ||
  fail "--nodes 2-1: exit $range21_status: $(cat "$work/range21.err")"
[ "$rangebad_status" -eq 2 ] && grep -q -- '--nodes "1-two" is not a node count N or a range MIN-MAX' "$work/rangebad.err" ||
  fail "--nodes 1-two: exit $rangebad_status: $(cat "$work/rangebad.err")"
[ "$rangefit_status" -eq 2 ] && grep -q -- '--tasks-per-node to be a multiple of pipeline.stages (4), got 2' "$work/rangefit.err" ||
  fail "--nodes 1-2 --tasks-per-node 2 with 4 stages: exit $rangefit_status: $(cat "$work/rangefit.err")"
[ "$fit_status" -eq 2 ] || fail "tasks that do not fit: exit $fit_status, expected 2"
grep -q "4 tasks do not fit --nodes 1 x --tasks-per-node 2 = 2 slots" "$work/fit.err" || fail "fit message: $(cat "$work/fit.err")"
[ "$nosbatch_status" -eq 1 ] || fail "no sbatch: exit $nosbatch_status, expected 1"
grep -q "Slurm not found.*run with mpirun: mpirun --mca odls_base_sigkill_timeout 30 -np 4 " "$work/nosbatch.err" || fail "no-sbatch message: $(cat "$work/nosbatch.err")"

# mlp.yaml has checkpoint.dir "": refused, in one line naming the key and the fix, and no script printed.
[ "$nodir_status" -eq 2 ] || fail "no checkpoint.dir: exit $nodir_status, expected 2"
[ "$(wc -l < "$work/nodir.err")" -eq 1 ] || fail "no checkpoint.dir: expected a one-line error, got: $(cat "$work/nodir.err")"
grep -q "checkpoint.dir is not set.*--set checkpoint.dir=DIR" "$work/nodir.err" || fail "no checkpoint.dir message: $(cat "$work/nodir.err")"
[ ! -s "$work/nodir.out" ] || fail "no checkpoint.dir: a script was printed anyway"
# The check sees the config after --set: a later override emptying the key is refused too.
[ "$emptied_status" -eq 2 ] || fail "checkpoint.dir emptied by --set: exit $emptied_status, expected 2"

# checkpoint.every 0 (mlp.yaml's) is allowed, with a warning on stderr; the script still goes to stdout.
[ "$every0_status" -eq 0 ] || fail "checkpoint.every=0: exit $every0_status, expected 0: $(cat "$work/every0.err")"
grep -q "warning: checkpoint.every is 0: only preemption checkpoints will be written" "$work/every0.err" ||
  fail "checkpoint.every=0: no warning on stderr: $(cat "$work/every0.err")"
head -n 1 "$work/every0.out" | grep -qx '#!/bin/bash' || fail "checkpoint.every=0: stdout is not the script"

echo "PASS: sbatch template forwarding/requeue logic (incl. the exit-after-signal race), no requeue after SIGTERM," \
  "--nodes MIN-MAX (whole nodes, srun --ntasks-per-node), --program (path, quoting, same requeue logic) and sluice submit errors"
