#!/bin/bash
# The install prefix's launchers (issue 31, item 4):
#   1. PREFIX/bin/sluice-mpirun (tools/sluice_mpirun.sh) with its fork agent PREFIX/libexec/sluice/
#      sluice-mpirun-rank, found from its own directory: a 4-rank `PREFIX/bin/sluice train` stopped by SIGTERM
#      to the launcher writes its checkpoint, and the launcher returns 75 within 5 s of the last rank's exit,
#      without Open MPI's abort banner. The grace period is the launcher's default 30 s: a bare mpirun (and the
#      launcher before the agent) took twice that (58.8 s) and printed "Per user-direction, the job has been
#      aborted." A failing rank's status still comes back as it is.
#   2. PREFIX/share/sluice/slurm/local/start.sh starts a private single-node Slurm that runs a job step, and
#      stop.sh beside it stops it.
# Usage: installed_launcher_test.sh INSTALL_SH TARBALL CONFIG
# Needs openmpi-bin, and for part 2 slurmd slurmctld slurm-client munge (without them part 2 fails under
# CI=true and says SKIPPED otherwise).
set -u
install_sh="$(realpath "$1")"
tarball="$(realpath "$2")"
config="$(realpath "$3")"
source "$(dirname "$0")/cli_test_env.sh"
unset OMPI_MCA_odls_base_sigkill_timeout  # the launcher's own default (30 s) is what users get
prefix="$work/prefix"
local_slurm="$prefix/share/sluice/slurm/local"
# stop.sh is a no-op when no Slurm was started; the ranks are found by their installed path.
trap '[ ! -x "$local_slurm/stop.sh" ] || "$local_slurm/stop.sh" "$work/slurm" > /dev/null 2>&1
      pkill -KILL -f "^$prefix/bin/sluice train"; rm -rf "$work"' EXIT
bash "$install_sh" "$tarball" "$prefix" > /dev/null || { echo "FAIL: install"; exit 1; }
show() { echo "---- $1 ----"; grep -v '^step ' "$1" | tail -n 30; }
ranks() { pgrep -f "^$prefix/bin/sluice train" || true; }

# --- 1. a stop under PREFIX/bin/sluice-mpirun --------------------------------------------------------------
"$prefix/bin/sluice-mpirun" --allow-run-as-root --oversubscribe -np 4 --mca btl self,vader \
  "$prefix/bin/sluice" train "$config" --set steps=1000000 --set "checkpoint.dir=$work/ck" --auto-resume \
  > "$work/run.log" 2>&1 &
launcher=$!
for _ in $(seq 600); do grep -q '^step 5 ' "$work/run.log" && break; sleep 0.1; done
grep -q '^step 5 ' "$work/run.log" || { fail "no training progress within 60 s: $(show "$work/run.log")"; kill -KILL "$launcher"; }
kill -TERM "$launcher"
for _ in $(seq 600); do [ -z "$(ranks)" ] && break; sleep 0.05; done
ranks_gone=$(date +%s%N)
[ -z "$(ranks)" ] || fail "ranks still running 30 s after SIGTERM: $(show "$work/run.log")"
for _ in $(seq 1500); do kill -0 "$launcher" 2>/dev/null || break; sleep 0.05; done
returned=$(date +%s%N)
kill -0 "$launcher" 2>/dev/null && { fail "the launcher still runs 75 s after the ranks ended"; kill -KILL "$launcher"; }
wait "$launcher"
status=$?
after_ms=$(((returned - ranks_gone) / 1000000))
echo "sluice-mpirun returned $status, ${after_ms} ms after the last rank exited"
[ "$status" = 75 ] || fail "sluice-mpirun exited $status after SIGTERM, expected 75: $(show "$work/run.log")"
[ "$after_ms" -le 5000 ] || fail "sluice-mpirun returned ${after_ms} ms after the last rank, more than 5 s"
! grep -qi 'aborted\|non-zero' "$work/run.log" || fail "Open MPI's abort banner was printed: $(show "$work/run.log")"
grep -q '^sluice: preempted: checkpoint .* written at step' "$work/run.log" ||
  fail "no checkpoint reported: $(show "$work/run.log")"
# A real failure is not a stop: its status passes through.
# (a short grace: mpirun aborts the job after a failure and sleeps twice the grace)
OMPI_MCA_odls_base_sigkill_timeout=1 "$prefix/bin/sluice-mpirun" --allow-run-as-root -np 2 sh -c 'exit 3' > "$work/fail.log" 2>&1
status=$?
[ "$status" = 3 ] || fail "a rank exiting 3: sluice-mpirun exited $status: $(cat "$work/fail.log")"
[ -z "$(find "$work" -maxdepth 2 -name '.sluice-mpirun.*')" ] || fail "the launcher left its status directory behind"

# --- 2. the installed single-node Slurm --------------------------------------------------------------------
missing=""
for program in slurmd slurmctld srun munged; do command -v "$program" > /dev/null || missing="$missing $program"; done
if [ -n "$missing" ]; then
  [ "${CI:-}" != true ] || fail "CI must run the installed slurm/local: missing$missing"
  echo "SKIPPED, NOT PASSED: the installed slurm/local (missing$missing)"
else
  [ -x "$local_slurm/start.sh" ] && [ -x "$local_slurm/stop.sh" ] || fail "$local_slurm lacks start.sh/stop.sh"
  SLUICE_SLURM_PORT=$((20000 + RANDOM % 10000)) "$local_slurm/start.sh" "$work/slurm" > "$work/slurm.log" 2>&1 ||
    fail "the installed start.sh failed: $(tail -n 20 "$work/slurm.log")"
  (source "$work/slurm/env.sh" && timeout 60 srun -n 1 echo installed-slurm-ran) > "$work/srun.log" 2>&1 ||
    fail "srun on the installed start.sh's Slurm: $(cat "$work/srun.log")"
  grep -qx installed-slurm-ran "$work/srun.log" || fail "the job step did not run: $(cat "$work/srun.log")"
  "$local_slurm/stop.sh" "$work/slurm" > /dev/null 2>&1 || fail "the installed stop.sh failed"
  for f in "$work"/slurm/pids/*.pid; do
    [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && fail "$(basename "$f" .pid) still runs after stop.sh"
  done
fi
finish "installed launcher"
