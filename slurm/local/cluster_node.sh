#!/bin/bash
# One machine of a slurm/local/cluster_start.sh cluster. Runs as PID 1 of its own PID, network, UTS and mount
# namespaces (cluster_start.sh starts it under `unshare`), so when it dies the kernel kills every process of the
# node with it: munged, slurmd or slurmctld, slurmstepd and the job's ranks. Nothing here touches the machine
# outside those namespaces; the mounts below are private to this node.
#
# Usage (by cluster_start.sh only): cluster_node.sh head|node DIR NAME ADDRESS
#   head: the switch (bridge br0, ADDRESS on it) and slurmctld; node: waits for its veth eth0 (created by
#   cluster_start.sh), puts ADDRESS on it and runs slurmd -N NAME.
set -euo pipefail
role="$1" dir="$2" name="$3" address="$4"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=slurm/local/slurm_common.sh
source "$here/slurm_common.sh"
mine="$dir/nodes/$name"

hostname "$name"
# This namespace's network devices under /sys/class/net (Open MPI and hwloc read them; the tests read the
# byte counters there), the cluster's host names, and DIR/node = this machine's own files (munge socket, slurmd
# pid file and log, PMIx's TmpFS), which slurm.conf names once for every node.
# slurmd needs the cgroup file system that a fresh sysfs would hide: carry it over.
mkdir -p "$mine/cgroup"
mount --rbind /sys/fs/cgroup "$mine/cgroup"
mount -t sysfs sysfs /sys
mount --move "$mine/cgroup" /sys/fs/cgroup
mount --bind "$dir/hosts" /etc/hosts
mount --bind "$mine" "$dir/node"
ip link set lo up

if [ "$role" = head ]; then
  ip link add br0 type bridge
  ip addr add "$address/24" dev br0
  ip link set br0 up
else
  for _ in $(seq 100); do ip link show eth0 >/dev/null 2>&1 && break; sleep 0.1; done
  ip addr add "$address/24" dev eth0
  ip link set eth0 up
fi

start_munged "$dir/munge.key" "$dir/node/munge" "$mine" "$mine/munged.pid"
if [ "$role" = head ]; then
  slurmctld -D -f "$dir/slurm.conf" >"$mine/slurmctld.stdout" 2>&1 &
else
  slurmd -D -N "$name" -f "$dir/slurm.conf" >"$mine/slurmd.stdout" 2>&1 &
fi
touch "$mine/ready"

# As PID 1: reap whatever is reparented here until cluster_stop.sh (or a lost owner) kills this process.
trap 'exit 0' TERM
while :; do
  wait -n 2>/dev/null || sleep 1
done
