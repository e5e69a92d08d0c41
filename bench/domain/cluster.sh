#!/bin/bash
# Issue 32 item 5 across nodes: bytes per step on the link between two nodes for the domain bench's U-Net
# (bench/domain/unet3d.yaml, 2 stages x [2, 2, 1] blocks = 8 ranks) on issue 31's namespace cluster
# (slurm/local/cluster_start.sh: 2 nodes, 4 ranks each, Open MPI over TCP on each node's eth0 veth, shared memory
# inside a node), against the bytes on paper.
#
# For each rank order -- stages_within_node (a stage's 4 blocks on one node: only the stage boundary crosses),
# stages_blocks_replicas (a block's two stages on one node, blocks {0, 1} on node 1 and {2, 3} on node 2: the
# halos of the first split dimension and the stage's tile gathers cross) -- two `sluice train` runs with S and
# S + 1 steps. Around each run: each node's eth0 rx/tx bytes and packets (read inside the node, as
# tests/slurm/multinode_placement_test.sh does), its TCP segments and retransmits, and Open MPI's pml monitoring
# of every rank (the bytes each rank posted to each peer). The difference of the two runs is one step (the start
# and the end cancel). Then rank_order auto once (1 step): its choice (start report); at 03434ce `sluice train`
# fails when auto picks an order whose blocks are not rank % 4 (bench/README.md "Across two nodes").
# bench/domain/cluster_bytes.py prints, per order: frames on the veth, their payload (frames minus Ethernet/IP/TCP
# headers), the retransmits, the MPI payload that crossed (monitoring, pairs on different nodes) and the paper's,
# per kind. --check PERCENT: exit 1 unless both orders' bytes are within PERCENT of the paper and auto ran and
# chose the order that measured smaller (about 30 s at --field 32,32,8 --tile 16,16,8).
#
# Usage: bench/domain/cluster.sh [--field D1,D2,D3] [--tile T1,T2,T3] [--steps S] [--gso] [--check PERCENT]
#                                [--keep DIR]
#   defaults: --field 64,64,16 --tile 32,32,16 --steps 1; --gso: keep the veths' segmentation offload (the
#   counters then count 64 KiB buffers, not wire frames); --keep DIR: copy the runs' files there.
#   Needs root (namespaces), slurmd slurmctld munge, util-linux, iproute2, Open MPI. SLUICE=path/to/sluice uses that binary (default: the -c opt build of
#   //tools/sluice:sluice, built if missing).
set -euo pipefail

field=64,64,16
tile=32,32,16
steps=1
keep=
gso=0
check=
while [ $# -gt 0 ]; do
  case "$1" in
    --field) field="$2"; shift 2 ;;
    --tile) tile="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --keep) keep="$2"; shift 2 ;;
    --gso) gso=1; shift ;;
    --check) check="$2"; shift 2 ;;
    *) echo "cluster.sh: unknown option '$1' (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done
[[ "$field" =~ ^[0-9]+,[0-9]+,[0-9]+$ && "$tile" =~ ^[0-9]+,[0-9]+,[0-9]+$ ]] ||
  { echo "cluster.sh: --field and --tile take three whole numbers, e.g. 64,64,16" >&2; exit 2; }
[[ "$steps" =~ ^[1-9][0-9]*$ ]] || { echo "cluster.sh: --steps must be a whole number >= 1" >&2; exit 2; }
[ -z "$check" ] || [[ "$check" =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
  { echo "cluster.sh: --check takes a percentage, e.g. 3" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "cluster.sh: needs root (the cluster's network namespaces)" >&2; exit 1; }

repo_root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$repo_root"
if [ -z "${SLUICE:-}" ]; then
  SLUICE="$(bazel info -c opt bazel-bin 2>/dev/null)/tools/sluice/sluice"
  [ -x "$SLUICE" ] || bazel build -c opt --jobs=2 //tools/sluice:sluice
fi
SLUICE="$(realpath "$SLUICE")"
config="$repo_root/bench/domain/unet3d.yaml"
# A short path: munge's and PMIx's Unix sockets live under it (108-byte limit).
work="$(mktemp -d /tmp/sl-cb.XXXXXX)"
cluster="$work/cluster"
cleanup() {
  local status=$?
  slurm/local/cluster_stop.sh "$cluster" || true
  if [ -n "$keep" ]; then mkdir -p "$keep"; cp -r "$work"/runs "$keep"/ || true; fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
mkdir -p "$work/tmp" "$work/runs"
runs="$work/runs"
export TMPDIR="$work/tmp" OMPI_MCA_btl_vader_backing_directory="$work/tmp"
# 8 ranks on this machine's cores: let waiting ranks yield (under srun Open MPI cannot tell it is oversubscribed).
export OMPI_MCA_mpi_yield_when_idle=1
bench_started=$(date +%s)
echo "domain bench across 2 nodes: field [2,$field], tile [$tile], $steps and $((steps + 1)) steps," \
  "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(git rev-parse --short HEAD)"
SLUICE_CLUSTER_OWNER_PID=$$ slurm/local/cluster_start.sh "$cluster" 2
# shellcheck disable=SC1091  # written by cluster_start.sh
source "$cluster/env.sh"
# pml monitoring wraps ob1 (env.sh keeps UCX out): both must be selectable.
export OMPI_MCA_pml=ob1,monitoring

in_node() { local node="$1"; shift; nsenter --target "$(cat "$cluster/pids/$node.init")" --net --mount -- "$@"; }
# "NODE rx_bytes tx_bytes rx_packets tx_packets InSegs OutSegs RetransSegs" of NODE (its eth0's counters, then
# the TCP segments of its network namespace from /proc/net/snmp: a retransmitted segment is counted again on the
# veth), appended to FILE.
counters() {
  local node
  for node in node1 node2; do
    # shellcheck disable=SC2016  # expanded by the node's sh
    echo "$node $(in_node "$node" sh -c 'cd /sys/class/net/eth0/statistics &&
      echo $(cat rx_bytes) $(cat tx_bytes) $(cat rx_packets) $(cat tx_packets)') $(tcp_segments "$node")" >>"$1"
  done
}
# "InSegs OutSegs RetransSegs" of NODE's network namespace (read through its PID 1's /proc entry: inside the node
# /proc is its PID namespace's, where an entered process has no /proc/self).
tcp_segments() {
  awk '/^Tcp:/ { if (!seen) { for (i = 2; i <= NF; ++i) name[i] = $i; seen = 1 }
                 else for (i = 2; i <= NF; ++i) v[name[i]] = $i }
       END { print v["InSegs"], v["OutSegs"], v["RetransSegs"] }' "/proc/$(cat "$cluster/pids/$1.init")/net/snmp"
}
header_bytes=$((14 + 20 + 20 + 12 * $(in_node node1 cat /proc/sys/net/ipv4/tcp_timestamps)))
# A veth hands whole TCP segmentation-offload buffers (up to 64 KiB) to its peer and counts each as one packet;
# a real Ethernet carries MTU-sized frames, each with its headers. One segment per buffer (gso_max_segs 1) makes
# the counters count the frames and headers a 1500-byte-MTU wire would carry. --gso keeps the offload.
for node in node1 node2; do
  [ "$gso" = 1 ] || in_node "$node" ip link set dev eth0 gso_max_segs 1
  echo "$node eth0: $(in_node "$node" ip -d link show eth0 | grep -o ' mtu [0-9]*\| gso_max_segs [0-9]*' | tr '\n' ' ')"
done

# train TAG STEPS OVERRIDES...: one 8-rank job over both nodes into $runs/TAG/ (rank r's output in out.r,
# monitoring in prof.r.prof, the counters before and after in counters.before / counters.after). Returns the
# job's status (the caller decides whether a failure ends the bench).
train() {
  local tag="$1" n="$2" dir="$runs/$1" status=0 started
  shift 2
  mkdir -p "$dir"
  counters "$dir/counters.before"
  started=$(date +%s)
  OMPI_MCA_pml_monitoring_enable=2 OMPI_MCA_pml_monitoring_enable_output=3 \
    OMPI_MCA_pml_monitoring_filename="$dir/prof" \
    timeout 900 srun --mpi=pmix --nodes=2 --ntasks-per-node=4 --output="$dir/out.%t" \
    "$SLUICE" train "$config" --set "model.inputs=[2,$field]" --set "pipeline.domain_tile=[$tile]" \
    --set comm.timeout=300 --set "steps=$n" "$@" || status=$?
  counters "$dir/counters.after"
  echo "-- $tag: exit $status, $(($(date +%s) - started)) s"
  return "$status"
}
fail_job() { tail -n 20 "$runs/$1"/out.* >&2; echo "cluster.sh: job $1 failed" >&2; exit 1; }

for order in stages_within_node stages_blocks_replicas; do
  for n in "$steps" $((steps + 1)); do
    train "$order.$n" "$n" --set "pipeline.rank_order=$order" || fail_job "$order.$n"
  done
done
grep -h "^step " "$runs/stages_within_node.$((steps + 1))/out.0" "$runs/stages_blocks_replicas.$((steps + 1))/out.0"
# auto: its choice is in the start report. When it picks an order whose blocks are not rank % 4, `sluice train`
# (at 03434ce) stops before the report: the data source was cut for stages_within_node's block (see bench/README.md).
failed=()
if train auto 1 --set pipeline.rank_order=auto; then
  auto_out="$runs/auto/out.0"
  echo "auto: $(sed -n 's/^ *\(rank order [a-z_]* (auto[^;]*\);.*/\1/p' "$auto_out" | head -n 1)"
else
  auto_out=
  echo "auto: the job failed: $(grep -h "sluice train" "$runs"/auto/out.* | head -n 1)"
  failed+=("the rank_order auto job failed")
fi

for order in stages_within_node stages_blocks_replicas; do
  echo
  echo "== $order"
  python3 bench/domain/cluster_bytes.py --short "$runs/$order.$steps" --long "$runs/$order.$((steps + 1))" \
    --header-bytes "$header_bytes" --config "$config" --field "$field" --tile "$tile" ${auto_out:+--auto "$auto_out"} \
    ${check:+--check "$check"} | tee "$runs/$order.table" || failed+=("$order: bytes outside the bound")
done
echo
measured() { sed -n 's/^  total *measured *\([0-9,]*\) .*/\1/p' "$runs/$1.table" | tr -d ,; }
within=$(measured stages_within_node) blocks=$(measured stages_blocks_replicas)
smaller=stages_within_node; [ "$blocks" -lt "$within" ] && smaller=stages_blocks_replicas
auto_choice="$(sed -n 's/^rank_order auto \(chose\|would choose\) \([a-z_]*\).*/\1 \2/p' "$runs/stages_within_node.table")"
echo "measured MPI payload between the nodes per step: stages_within_node $within, stages_blocks_replicas $blocks:" \
  "$smaller crosses less; auto $auto_choice"
# Without an auto run, its choice is the one the start report's predictions imply (the same placement either way:
# stages_replicas_blocks and replicas_stages_blocks place one replica as stages_blocks_replicas does).
case "${auto_choice#* }" in
  "$smaller") ;;
  stages_replicas_blocks | replicas_stages_blocks) [ "$smaller" = stages_blocks_replicas ] || failed+=("auto: not $smaller") ;;
  stages_across_nodes | replicas_blocks_stages) [ "$smaller" = stages_within_node ] || failed+=("auto: not $smaller") ;;
  *) failed+=("auto $auto_choice, but $smaller measured smaller") ;;
esac
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg); $(($(date +%s) - bench_started)) s in all"
if [ -n "$check" ]; then
  [ ${#failed[@]} -eq 0 ] || { printf 'CHECK FAILED: %s\n' "${failed[@]}"; exit 1; }
  echo "CHECK PASSED: MPI payload and each veth's payload within $check % of the paper for both orders; auto" \
    "ran and chose the order that measured smaller"
fi
