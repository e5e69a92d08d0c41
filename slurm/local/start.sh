#!/bin/bash
# Starts a private single-node Slurm (munged, slurmctld, slurmd) on localhost for tests and demos.
#
# Usage: slurm/local/start.sh DIR        then: source DIR/env.sh; sbatch ...; slurm/local/stop.sh DIR
# Everything (munge key and socket, slurm.conf, state, spool, logs, pid files) lives under DIR, so nothing of
# the machine's own Slurm/munge setup is touched. Works as root (SlurmUser is whoever runs this script).
# Ports: SLUICE_SLURM_PORT (default 6817) for slurmctld and the next one for slurmd, or the next free pair after
# them.
# Needs apt packages: slurmd slurmctld slurm-client munge (slurm-wlm-basic-plugins comes with them).
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 DIR  (a fresh or empty directory for Slurm's config, state and logs)" >&2
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=slurm/local/slurm_common.sh
source "$here/slurm_common.sh"
require_programs munged mungekey slurmctld slurmd sinfo
mkdir -p "$1"
dir="$(cd "$1" && pwd)"
# True when TCP ports $1 and $1+1 can both be bound now (no listener, no connection lingering on them): a busy
# port made slurmd fail with "Address already in use" and the node never became idle (seen in CI).
ports_free() {
  python3 -c 'import socket, sys
for port in (int(sys.argv[1]), int(sys.argv[1]) + 1):
    s = socket.socket(); s.bind(("", port)); s.close()' "$1" 2>/dev/null
}
ctld_port="${SLUICE_SLURM_PORT:-6817}"
for _ in $(seq 50); do ports_free "$ctld_port" && break; ctld_port=$((ctld_port + 2)); done
slurmd_port=$((ctld_port + 1))
mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log" "$dir/pids" "$dir/tmpfs"
# --- munge: authentication between the daemons and the clients ------------------------------------------
make_munge_key "$dir/munge/munge.key"
start_munged "$dir/munge/munge.key" "$dir/munge" "$dir/log" "$dir/pids/munged.pid"

# --- slurm.conf: the settings known to work on one small node (see docs/SLURM.md) ------------------------
write_common_slurm_conf "$dir/slurm.conf" "$dir" "localhost(127.0.0.1)" "$ctld_port" "$slurmd_port" \
  "$dir/munge/munge.socket" "$dir/log" "$dir/tmpfs"
cat >> "$dir/slurm.conf" <<CONF
NodeName=localhost NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF

cat > "$dir/env.sh" <<ENV
# Source this to point Slurm's client commands at the local cluster in $dir.
export SLURM_CONF="$dir/slurm.conf"
ENV
export SLURM_CONF="$dir/slurm.conf"

# --- the daemons, in the foreground of background jobs so that $! is the daemon itself ------------------
slurmctld -D -f "$dir/slurm.conf" >"$dir/log/slurmctld.stdout" 2>&1 &
echo $! > "$dir/pids/slurmctld.pid"
slurmd -D -N localhost -f "$dir/slurm.conf" >"$dir/log/slurmd.stdout" 2>&1 &
echo $! > "$dir/pids/slurmd.pid"

for _ in $(seq 100); do
  state="$(sinfo -h -n localhost -o %t 2>/dev/null || true)"
  if [ "$state" = "idle" ]; then
    echo "local Slurm is up in $dir (source $dir/env.sh)"
    exit 0
  fi
  sleep 0.3
done
echo "$0: node localhost did not become idle (state: '${state:-no answer}'); logs in $dir/log:" >&2
tail -n 20 "$dir"/log/*.log >&2 || true
exit 1
