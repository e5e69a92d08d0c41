#!/bin/bash
# Stops a cluster started by slurm/local/cluster_start.sh DIR: kills each machine's PID 1 (recorded in DIR/pids),
# and the kernel then ends every process of that machine's PID namespace -- daemons, job steps, ranks -- and
# removes its network namespace and veth. Each recorded pid is checked to still be this cluster's process (its
# command line names DIR) before it is signalled, never a process found by name. Safe to call twice, after a
# failed start, or while jobs run.
set -uo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 DIR  (the directory given to cluster_start.sh)" >&2
  exit 2
fi
[ -d "$1/pids" ] || exit 0
dir="$(cd "$1" && pwd)"

# True when pid $1 is alive and its command line mentions DIR (so a reused pid is left alone).
ours() {
  tr '\0' ' ' 2>/dev/null < "/proc/$1/cmdline" | grep -qF -- "$dir"
}

victims=()
for pid_file in "$dir"/pids/*.init "$dir"/pids/*.unshare "$dir"/pids/watchdog; do
  [ -f "$pid_file" ] || continue
  pid="$(cat "$pid_file")"
  # The watchdog runs this script in its own process when the owner is gone.
  if [ "$pid" != "$$" ] && ours "$pid"; then
    kill -KILL "$pid" 2>/dev/null && victims+=("$pid")
  fi
done
for pid in "${victims[@]}"; do
  for _ in $(seq 50); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
  [ -d "/proc/$pid" ] && echo "$0: pid $pid is still there 5 s after SIGKILL" >&2
done
rm -rf "$dir/pids"
exit 0
