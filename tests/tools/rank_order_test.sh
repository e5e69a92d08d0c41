#!/bin/bash
# pipeline.rank_order under mpirun: 4 ranks that SLUICE_NODE_ID splits into 2 "nodes" (ranks 0-1, 2-3), 2 stages
# x 2 replicas. auto must put a stage's replicas on one node (stages across nodes: for this MLP the gradient sums
# move more bytes than the stage boundary), every rank must report the agreed layout, and the trained parameters
# must be bit-identical to the run with the other order (checkpoints are layout-free; replicas are summed in
# replica order either way). Without SLUICE_NODE_ID the 4 ranks share one node and nothing crosses a node.
# Usage: rank_order_test.sh SLUICE CONFIG
set -u
SLUICE="$1"
CONFIG="$2"
source "$(dirname "$0")/cli_test_env.sh"

common=(--set pipeline.stages=2 --set steps=3 --set checkpoint.every=3)
mpi=(timeout 120 mpirun --allow-run-as-root --oversubscribe --mca btl self,vader)
# two_nodes DIR [--set ...]: the 4-rank run as 2 nodes of 2 ranks; output in $out
two_nodes() {
  local dir="$1"
  shift
  out="$("${mpi[@]}" -np 2 env SLUICE_NODE_ID=0 "$SLUICE" train "$CONFIG" "${common[@]}" --set checkpoint.dir="$dir" "$@" : \
                   -np 2 env SLUICE_NODE_ID=1 "$SLUICE" train "$CONFIG" "${common[@]}" --set checkpoint.dir="$dir" "$@" 2>&1)"
  code=$?
}

two_nodes "$work/auto"
[ "$code" -eq 0 ] || fail "auto run exited $code: $out"
grep -q "rank order stages_across_nodes (auto, 2 node(s))" <<<"$out" || fail "auto did not choose stages_across_nodes: $out"
# stage = rank / replicas, replica = rank % replicas; nodes as SLUICE_NODE_ID gave them
for expect in "rank 0: replica 0, pipeline rank 0" "rank 1: replica 1, pipeline rank 0" \
              "rank 2: replica 0, pipeline rank 1" "rank 3: replica 1, pipeline rank 1"; do
  grep -q "$expect" <<<"$out" || fail "missing layout line '$expect': $out"
done
grep -q "rank 1: .*, node 0," <<<"$out" || fail "rank 1 not reported on node 0: $out"
grep -q "rank 2: .*, node 1," <<<"$out" || fail "rank 2 not reported on node 1: $out"
across="$(grep -o "stages_across_nodes [0-9.e+]* MB" <<<"$out" | head -1 | cut -d' ' -f2)"
within="$(grep -o "stages_within_node [0-9.e+]* MB" <<<"$out" | head -1 | cut -d' ' -f2)"
python3 -c "import sys; a, w = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if 0 < a < w else 1)" \
  "$across" "$within" || fail "expected 0 < across ($across MB) < within ($within MB)"

two_nodes "$work/within" --set pipeline.rank_order=stages_within_node
[ "$code" -eq 0 ] || fail "stages_within_node run exited $code: $out"
grep -q "rank order stages_within_node (set in the config, 2 node(s))" <<<"$out" || fail "order not kept: $out"
grep -q "rank 1: replica 0, pipeline rank 1" <<<"$out" || fail "stages_within_node layout: $out"

a="$work/auto/ckpt_00000003.h5"
w="$work/within/ckpt_00000003.h5"
h5diff -q "$a" "$w" /model /model && h5diff -q "$a" "$w" /optimizer /optimizer ||
  fail "the two rank orders trained different parameters"

out="$("${mpi[@]}" -np 4 "$SLUICE" train "$CONFIG" "${common[@]}" --set checkpoint.dir="$work/one" 2>&1)"
[ $? -eq 0 ] || fail "one-node run failed: $out"
grep -q "rank order stages_within_node (auto, 1 node(s)); inter-node bytes per optimizer step: stages_across_nodes 0 MB, stages_within_node 0 MB" <<<"$out" ||
  fail "one node: $out"

out="$("${mpi[@]}" -np 4 env SLUICE_NODE_ID=x "$SLUICE" train "$CONFIG" "${common[@]}" --set checkpoint.dir="$work/bad" 2>&1)"
[ $? -ne 0 ] || fail "a malformed SLUICE_NODE_ID was accepted"
grep -q "SLUICE_NODE_ID on rank 0 is not a non-negative integer" <<<"$out" || fail "malformed SLUICE_NODE_ID: $out"
finish "rank order"
