#!/bin/bash
# Placement measured on a real multi-node Slurm: a cluster of 2 namespace nodes on this machine
# (slurm/local/cluster_start.sh), 2 ranks per node, examples/configs/mlp.yaml as 2 stages x 2 replicas, Open MPI
# over TCP between the nodes (MPICH over UCX's TCP under srun --mpi=pmi2 when built with --config=mpich). For both pipeline.rank_order values, the bytes crossing each node's veth per
# optimizer step -- the counters' difference between a run of N+20 steps and one of N steps, / 20 -- must match
# the start report's prediction within 10 %, and rank_order auto must pick the order that measured smaller.
# Done at mlp.yaml's data.batch 64 (activations are the smaller traffic: auto picks stages_across_nodes) and
# at 1024 (the gradient sums are: auto picks stages_within_node), so a wrong choice either way fails.
#
# What is compared: the prediction counts MPI payload. The veth counters (rx + tx bytes and packets under
# /sys/class/net/eth0/statistics, read inside the node) count whole frames: Ethernet + IPv4 + TCP headers on
# each (14 + 20 + 20 bytes, + 12 with TCP timestamps, read from the node's net.ipv4.tcp_timestamps), and ACK
# frames carry nothing else. So payload = bytes - packets x header size. What is left above the prediction is
# Open MPI's own traffic (its header on every message, the small per-step collectives: stop agreement, loss),
# which the prediction leaves out on purpose; it is printed, not subtracted. Slurm's and PMIx's traffic for
# starting a job is the same for N and N+20 steps and cancels; the ranks' output goes to files on the node
# (srun --output), not over the network.
#
# Then: cluster_stop.sh leaves no process in any node's PID namespace and no link in this namespace, and a
# second cluster whose owner process is SIGKILLed (SLUICE_CLUSTER_OWNER_PID) is gone by itself within 10 s.
#
# Usage: multinode_placement_test.sh SLUICE CONFIG CLUSTER_START CLUSTER_STOP
# Needs root (namespaces), util-linux (unshare, nsenter), iproute2, slurmd slurmctld slurm-client munge,
# openmpi-bin. Without root or namespaces it fails under CI=true and says SKIPPED otherwise.
set -euo pipefail
sluice="$(realpath "$1")"
config="$(realpath "$2")"
cluster_start="$(realpath "$3")"
cluster_stop="$(realpath "$4")"
readonly short_steps=2 long_steps=22 tolerance_percent=10

# shellcheck source=tests/slurm/cluster_test_lib.sh
source "$(dirname "$0")/cluster_test_lib.sh"
require_namespaces

# Short path: munge's and PMIx's Unix sockets live under it (108-byte limit).
work="$(mktemp -d /tmp/sl-nodes.XXXXXX)"
cluster="$work/cluster"
cleanup() {
  local status=$?
  "$cluster_stop" "$cluster" || true
  "$cluster_stop" "$work/orphan" || true
  if [ -n "${owner_pid:-}" ]; then kill -KILL "$owner_pid" 2>/dev/null || true; fi
  if [ "$status" -ne 0 ]; then
    for f in "$work"/*.out; do [ -f "$f" ] && { echo "---- $f ----"; tail -n 15 "$f"; }; done >&2
    tail -n 20 "$cluster"/log/slurmctld.log "$cluster"/nodes/*/slurmd.log >&2 2>/dev/null || true
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

links_before="$(ip -o link | wc -l)"
started=$(date +%s)
start_test_cluster "$cluster_start" "$cluster" 2
echo "cluster of 2 nodes up in $(($(date +%s) - started)) s"

in_node() { local node="$1"; shift; nsenter --target "$(cat "$cluster/pids/$node.init")" --net --mount -- "$@"; }
# "rx_bytes+tx_bytes rx_packets+tx_packets" of NODE's eth0.
counters() {
  in_node "$1" sh -c 'cd /sys/class/net/eth0/statistics && echo $(($(cat rx_bytes) + $(cat tx_bytes))) \
    $(($(cat rx_packets) + $(cat tx_packets)))'
}
header_bytes=$((14 + 20 + 20 + 12 * $(in_node node1 cat /proc/sys/net/ipv4/tcp_timestamps)))

# train TAG --set ...: one 4-rank job over both nodes; rank r's output in $work/TAG.r.out.
train() {
  local tag="$1"; shift
  timeout 120 srun "$(srun_mpi_option)" --nodes=2 --ntasks-per-node=2 --output="$work/$tag.%t.out" \
    "$sluice" train "$config" --set pipeline.stages=2 --set comm.timeout=10 "$@" ||
    fail "job $tag failed (status $?)"
}
# The start report's predicted bytes per step: "ACROSS WITHIN".
predicted() {
  sed -n 's/.*(\([0-9]*\) and \([0-9]*\) bytes of MPI payload).*/\1 \2/p' "$work/$1.0.out" | head -n 1
}
chosen() { sed -n 's/^ *rank order \([a-z_]*\) .*/\1/p' "$work/$1.0.out" | head -n 1; }

# measure ORDER BATCH: checks both nodes' payload per step against the prediction and leaves it in
# payload[node1] and payload[node2] (no command substitution: a failure must end the test).
declare -A payload
measure() {
  local order="$1" batch="$2" tag="$1.$2" node
  local -A before middle after
  for node in node1 node2; do before[$node]="$(counters $node)"; done
  train "$tag.short" --set "steps=$short_steps" --set "data.batch=$batch" --set "pipeline.rank_order=$order"
  for node in node1 node2; do middle[$node]="$(counters $node)"; done
  train "$tag.long" --set "steps=$long_steps" --set "data.batch=$batch" --set "pipeline.rank_order=$order"
  for node in node1 node2; do after[$node]="$(counters $node)"; done
  [ "$(chosen "$tag.long")" = "$order" ] || fail "$tag: the run did not use rank order $order"
  read -r across within <<<"$(predicted "$tag.long")"
  [ -n "$within" ] || fail "$tag: no prediction in the start report"
  local expect=$across; [ "$order" = stages_within_node ] && expect=$within
  for node in node1 node2; do
    read -r a_bytes a_packets <<<"${before[$node]}"
    read -r b_bytes b_packets <<<"${middle[$node]}"
    read -r c_bytes c_packets <<<"${after[$node]}"
    local steps=$((long_steps - short_steps))
    local bytes=$(( (c_bytes - b_bytes) - (b_bytes - a_bytes) ))  # over `steps` steps
    local packets=$(( (c_packets - b_packets) - (b_packets - a_packets) ))
    local measured=$(( (bytes - packets * header_bytes) / steps ))
    local off_permille=$(( (measured - expect) * 1000 / expect ))
    printf '%-20s batch %4d %s: %7d bytes/step on eth0 = %4d frames x %d header + %7d payload; predicted %7d;' \
      "$order" "$batch" "$node" "$((bytes / steps))" "$((packets / steps))" "$header_bytes" "$measured" "$expect"
    awk -v d=$((measured - expect)) -v e="$expect" 'BEGIN { printf " payload - predicted = %+d (%+.1f %%)\n", d, 100 * d / e }' 
    [ "${off_permille#-}" -le $((tolerance_percent * 10)) ] ||
      fail "$order, batch $batch, $node: $measured payload bytes per step, predicted $expect (more than $tolerance_percent % off)"
    payload[$node]=$measured
  done
}

for batch in 64 1024; do
  measure stages_across_nodes "$batch"
  across_node1=${payload[node1]} across_node2=${payload[node2]}
  measure stages_within_node "$batch"
  within_node1=${payload[node1]} within_node2=${payload[node2]}
  train "auto.$batch" --set steps=1 --set "data.batch=$batch" --set pipeline.rank_order=auto
  read -r across within <<<"$(predicted "auto.$batch")"
  smaller_predicted=stages_within_node; [ "$across" -lt "$within" ] && smaller_predicted=stages_across_nodes
  smaller_measured=stages_within_node
  [ "$across_node1" -lt "$within_node1" ] && [ "$across_node2" -lt "$within_node2" ] &&
    smaller_measured=stages_across_nodes
  [ "$smaller_predicted" = "$smaller_measured" ] ||
    fail "batch $batch: predicted $smaller_predicted to cross less, measured $smaller_measured"
  [ "$(chosen "auto.$batch")" = "$smaller_measured" ] ||
    fail "batch $batch: auto chose $(chosen "auto.$batch"), but $smaller_measured measured smaller"
  echo "batch $batch: auto chose $smaller_measured, the order measured smaller"
done

# --- nothing left: stop, then no process in any node's PID namespace, no link added here ------------------
mapfile -t namespaces < <(machine_namespaces "$cluster")
[ "$(processes_in "${namespaces[@]}")" -gt 0 ] || fail "the check below would see nothing: no process found in the nodes"
"$cluster_stop" "$cluster"
"$cluster_stop" "$cluster"  # twice: must be harmless
left="$(processes_in "${namespaces[@]}")"
[ "$left" -eq 0 ] || fail "$left process(es) still run in the nodes' namespaces after cluster_stop.sh"
[ "$(ip -o link | wc -l)" -eq "$links_before" ] || fail "links in this namespace changed: $(ip -o link)"

# --- a killed owner: the watchdog ends its cluster --------------------------------------------------------
sleep 300 &
owner_pid=$!
SLUICE_CLUSTER_OWNER_PID=$owner_pid "$cluster_start" "$work/orphan" 1 >/dev/null
mapfile -t orphan_namespaces < <(machine_namespaces "$work/orphan")
[ "$(processes_in "${orphan_namespaces[@]}")" -gt 0 ] || fail "the second cluster has no processes"
kill -KILL "$owner_pid"
wait "$owner_pid" 2>/dev/null || true
for _ in $(seq 100); do [ "$(processes_in "${orphan_namespaces[@]}")" -eq 0 ] && break; sleep 0.1; done
left="$(processes_in "${orphan_namespaces[@]}")"
[ "$left" -eq 0 ] || fail "$left process(es) of a cluster whose owner was killed still run after 10 s"

echo "PASS: bytes per step on each node's veth match the prediction within $tolerance_percent % for both rank" \
  "orders at batch 64 and 1024, auto chose the smaller; nothing left after stop or a killed owner" \
  "($(($(date +%s) - started)) s)"
