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
for program in munged mungekey slurmctld slurmd sinfo; do
  command -v "$program" >/dev/null || { echo "$0: $program not found; apt-get install -y slurmd slurmctld slurm-client munge" >&2; exit 1; }
done
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
user="$(id -un)"
mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log" "$dir/pids" "$dir/tmpfs"
# munged refuses a socket directory that others could write to, and clients must be able to reach it.
chmod 755 "$dir/munge"

# --- munge: authentication between the daemons and the clients ------------------------------------------
rm -f "$dir/munge/munge.key"
mungekey --create --keyfile="$dir/munge/munge.key"
chmod 600 "$dir/munge/munge.key"
munged --foreground --force \
  --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
  --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed" \
  --origin=127.0.0.1 >"$dir/log/munged.stdout" 2>&1 &
echo $! > "$dir/pids/munged.pid"

# --- slurm.conf: the settings known to work on one small node (see docs/SLURM.md) ------------------------
cat > "$dir/slurm.conf" <<CONF
ClusterName=sluice-local
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# cred_expire=5: a requeued job starts again after ~6 s instead of the default 120 s.
AuthInfo=socket=$dir/munge/munge.socket,cred_expire=5
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/slurmd-%n
# PMIx puts per-step directories (spmix_appdir_<uid>_<job>.<step>) under TmpFS: keep them private, or two
# local clusters (both numbering jobs from 1) or a killed run's leftovers make srun fail with "File exists".
TmpFS=$dir/tmpfs
SlurmctldPidFile=$dir/state/slurmctld.pid
SlurmdPidFile=$dir/spool/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=pmix
MailProg=/bin/true
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
AcctGatherEnergyType=acct_gather_energy/none
JobCompType=jobcomp/none
ReturnToService=2
# Schedule at once and forget finished jobs quickly, so tests (and sbatch --wait) are not slowed down.
SchedulerParameters=batch_sched_delay=0,sched_interval=1,bf_interval=1
MinJobAge=5
# CPUs=8 on a smaller machine: config_overrides lets slurmd accept it, so a 4-rank job fits on 2 cores.
SlurmdParameters=config_overrides
NodeName=localhost NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF

cat > "$dir/env.sh" <<ENV
# Source this to point Slurm's client commands at the local cluster in $dir.
export SLURM_CONF="$dir/slurm.conf"
ENV
export SLURM_CONF="$dir/slurm.conf"

for _ in $(seq 50); do [ -S "$dir/munge/munge.socket" ] && break; sleep 0.1; done
[ -S "$dir/munge/munge.socket" ] || { echo "$0: munged did not start; see $dir/log/munged.log" >&2; exit 1; }

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
