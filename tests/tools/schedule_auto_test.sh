#!/bin/bash
# pipeline.schedule auto under mpirun (4 ranks, the example MLP): the run reports the candidate table, the chosen
# candidate is the shortest simulated one that fits, and the run's own counters stay within the budget on every
# rank: its peak stash bytes plus 16 bytes per parameter of its layers (AdamW: parameter, gradient, 2 moments).
# A budget nothing fits fails on every rank with the same message (no hang).
# Usage: schedule_auto_test.sh SLUICE CONFIG
set -u
SLUICE="$1"
CONFIG="$2"
source "$(dirname "$0")/cli_test_env.sh"
mpi=(timeout 120 mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -np 4)
budget=300000

out="$("${mpi[@]}" "$SLUICE" train "$CONFIG" --set pipeline.schedule=auto --set pipeline.memory_budget=$budget \
        --set steps=2 --set checkpoint.dir="$work/auto" 2>&1)"
code=$?
[ "$code" -eq 0 ] || fail "auto run exited $code: $out"
python3 - "$out" "$budget" <<'PY' || fail "auto choice or budget: $out"
import re, sys
out, budget = sys.argv[1], float(sys.argv[2])
rows = re.findall(r"^(-->|   ) (\S+)\s+(\d+)\s+(\d+)\s+(none|full)\s+(\S+)\s+(\S+)\s+(yes|no)$", out, re.M)
assert rows, "no candidate table"
chosen = [r for r in rows if r[0] == "-->"]
assert len(chosen) == 1, chosen
fits = [float(r[5]) for r in rows if float(r[6]) <= budget]
assert float(chosen[0][5]) == min(fits), (chosen, min(fits))
name, v, m, rc = chosen[0][1:5]
head = re.search(r"schedule (\S+), (\d+) chunk\(s\)/rank, (\d+) micro-batches, recompute (\S+),", out)
assert head.groups() == (name, v, m, rc), (head.groups(), chosen)
# Parameters per layer of examples/configs/mlp.yaml (inputs 32): linear 32->64, gelu, dropout, linear 64->64, tanh,
# layernorm 64, residual_mlp 64 (hidden 128), linear 64->8.
params = [32 * 64 + 64, 0, 0, 64 * 64 + 64, 0, 2 * 64, 64 * 128 + 128 + 128 * 64 + 64, 64 * 8 + 8]
stash = [float(x) for x in re.search(r"peak stash bytes per rank \[([^\]]*)\]", out).group(1).split(",")]
for rank in range(4):
    line = re.search(r"rank %d: .*?, stages (.*?), node" % rank, out).group(1)
    layers = [(int(a), int(b)) for a, b in re.findall(r"layers (\d+)-(\d+)", line)]
    static = 16 * sum(sum(params[a:b + 1]) for a, b in layers)
    assert static + stash[rank] <= budget, (rank, static, stash[rank], budget)
PY

out="$("${mpi[@]}" "$SLUICE" train "$CONFIG" --set pipeline.schedule=auto --set pipeline.memory_budget=100000 \
        --set steps=1 --set checkpoint.dir="$work/none" 2>&1)"
code=$?
[ "$code" -ne 0 ] && [ "$code" -ne 124 ] || fail "a budget nothing fits should fail (not hang), exited $code: $out"
grep -q "no schedule fits pipeline.memory_budget" <<<"$out" || fail "no 'nothing fits' message: $out"

finish "schedule auto"
