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

# Daemons first, munged last: slurmd and slurmctld still authenticate while shutting down.
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
