# Shared by the Slurm job tests that cancel a job (train_cancel_test, program_cancel_test): clean-up that stops
# the test's private Slurm and, on failure, prints the job's and slurmctld's logs; bounded polling; job queries.
# The caller sets `work` (its temporary directory) and `stop_slurm` before sourcing this file.
cleanup() {
  local status=$?
  "$stop_slurm" "$work/slurm" || true
  if [ "$status" -ne 0 ]; then
    for f in "$work"/job/*.out "$work"/job/*.err "$work"/*.log; do
      [ -f "$f" ] && { echo "---- $f ----" >&2; tail -n 40 "$f" >&2; }
    done
    echo "---- slurmctld ----" >&2; tail -n 30 "$work/slurm/log/slurmctld.log" >&2 2>/dev/null || true
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# poll SECONDS COMMAND...: runs COMMAND every 0.1 s until it succeeds; fails after SECONDS.
poll() {
  local limit=$(( $1 * 10 )); shift
  for _ in $(seq "$limit"); do "$@" && return 0; sleep 0.1; done
  return 1
}
steps_in() { local n; n="$(grep -c '^step ' "$1" 2>/dev/null)" || true; echo "${n:-0}"; }
has_steps() { [ "$(steps_in "$1")" -ge "$2" ]; }
job_gone() { ! scontrol show job "$1" > /dev/null 2>&1; }
job_state() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
