#!/bin/bash
# Stops the daemons started by slurm/local/start.sh DIR: exactly the PIDs recorded in DIR/pids, never by name
# (other Slurm or munge instances on the machine are left alone). Safe to call twice or after a failed start.
set -uo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 DIR  (the directory given to start.sh)" >&2
  exit 2
fi
pid_dir="$1/pids"
[ -d "$pid_dir" ] || exit 0

# Jobs first: a job's processes (slurmstepd, srun, the ranks) outlive a killed slurmd, so end them through
# Slurm while it is still up: cancel every job of this private cluster and wait for them to go.
export SLURM_CONF="$1/slurm.conf"
if [ -f "$pid_dir/slurmctld.pid" ] && kill -0 "$(cat "$pid_dir/slurmctld.pid")" 2>/dev/null; then
  jobs="$(squeue -h -o %i 2>/dev/null || true)"
  if [ -n "$jobs" ]; then
    # shellcheck disable=SC2086  # one word per job id
    scancel --quiet $jobs 2>/dev/null || true
    for _ in $(seq 100); do [ -z "$(squeue -h -o %i 2>/dev/null || true)" ] && break; sleep 0.2; done
  fi
fi
# Whatever is still running in a job step of this cluster (slurmd lists them from its own spool): kill it.
if [ -f "$pid_dir/slurmd.pid" ] && kill -0 "$(cat "$pid_dir/slurmd.pid")" 2>/dev/null; then
  for pid in $(scontrol listpids 2>/dev/null | awk 'NR > 1 && $1 ~ /^[0-9]+$/ {print $1}'); do
    kill -KILL "$pid" 2>/dev/null || true
  done
fi

# Then the daemons, munged last: slurmd and slurmctld still authenticate while shutting down.
for daemon in slurmd slurmctld munged; do
  pid_file="$pid_dir/$daemon.pid"
  [ -f "$pid_file" ] || continue
  pid="$(cat "$pid_file")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      echo "$0: $daemon (pid $pid) ignored SIGTERM for 5 s; sending SIGKILL" >&2
      kill -KILL "$pid" 2>/dev/null
    fi
  fi
  rm -f "$pid_file"
done
exit 0
