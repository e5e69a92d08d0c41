# shellcheck shell=bash
# Pieces shared by slurm/local/start.sh (one node on localhost) and cluster_start.sh (several nodes, each in its
# own network namespace): the program check, the munge key and daemon, and the slurm.conf settings known to work
# on a small machine (see docs/SLURM.md). Sourced, not run.

# Exits with the apt command to run when one of the named programs is missing.
require_programs() {
  local program
  for program in "$@"; do
    command -v "$program" >/dev/null || {
      echo "$0: $program not found; apt-get install -y slurmd slurmctld slurm-client munge" >&2
      exit 1
    }
  done
}

# A fresh munge key at $1 (every munged of one cluster must share it).
make_munge_key() {
  rm -f "$1"
  mungekey --create --keyfile="$1"
  chmod 600 "$1"
}

# Starts munged in the background with key $1, its socket, pid and seed files in directory $2 and its log in
# directory $3, writes its pid (as this shell sees it) to file $4 and waits for the socket.
start_munged() {
  local key="$1" sockets="$2" logs="$3" pid_file="$4"
  mkdir -p "$sockets" "$logs"
  # munged refuses a socket directory that others could write to, and clients must be able to reach it.
  chmod 755 "$sockets"
  munged --foreground --force --key-file="$key" --socket="$sockets/munge.socket" \
    --pid-file="$sockets/munged.pid" --log-file="$logs/munged.log" --seed-file="$sockets/munged.seed" \
    --origin=127.0.0.1 >"$logs/munged.stdout" 2>&1 &
  echo $! > "$pid_file"
  for _ in $(seq 50); do [ -S "$sockets/munge.socket" ] && return 0; sleep 0.1; done
  echo "$0: munged did not start; see $logs/munged.log" >&2
  exit 1
}

# Writes the settings every private cluster shares to file $1; the caller appends its NodeName and PartitionName
# lines. Arguments: $2 the directory that holds state/, spool/ and log/, $3 the SlurmctldHost value, $4 and $5 the
# slurmctld and slurmd ports, $6 the munge socket, $7 a directory for the slurmd's pid file and log, $8 TmpFS.
write_common_slurm_conf() {
  local conf="$1" dir="$2" ctld_host="$3" ctld_port="$4" slurmd_port="$5" socket="$6" slurmd_dir="$7" tmpfs="$8"
  cat > "$conf" <<CONF
ClusterName=sluice-local
SlurmctldHost=$ctld_host
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$(id -un)
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# cred_expire=5: a requeued job starts again after ~6 s instead of the default 120 s.
AuthInfo=socket=$socket,cred_expire=5
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/slurmd-%n
# PMIx puts per-step directories (spmix_appdir_<uid>_<job>.<step>) under TmpFS: keep them private, or two
# local clusters (both numbering jobs from 1) or a killed run's leftovers make srun fail with "File exists".
TmpFS=$tmpfs
SlurmctldPidFile=$dir/state/slurmctld.pid
SlurmdPidFile=$slurmd_dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$slurmd_dir/slurmd.log
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
# More CPUs than the machine has: config_overrides lets slurmd accept it, so a 4-rank job fits on 2 cores.
SlurmdParameters=config_overrides
CONF
}
