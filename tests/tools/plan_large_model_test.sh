#!/bin/bash
# `sluice plan` of a 1.2 B-parameter vision transformer (issue 29 item 4: 24 blocks of dim 2048, 16 heads, patch 8 on
# a 4 x 256 x 256 field, 8 stages) is sized from the layer shapes without building the layers: it ends within 20 s and
# 1 GiB, says its stash is estimated, and with schedule auto lists every candidate with its peak bytes per rank and
# whether it fits pipeline.memory_budget; for the planned schedule and every other kind, each rank's layers,
# parameters (checked against the layers' formulas here), peak stash, bubble (the plan's simulation) and fit.
# A small model is still measured.
# Usage: plan_large_model_test.sh <path to the sluice binary>
set -u
SLUICE="$1"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
dir="${TEST_TMPDIR:-/tmp}/plan_large"
mkdir -p "$dir"

write_config() {  # $1: file, $2: blocks, $3: dim, $4: schedule, $5: the field's extent (square), a multiple of 8
  local grid=$(($5 / 8))
  {
    echo "model:"
    echo "  inputs: [4, $5, $5]"
    echo "  layers:"
    echo "    - {type: patch_embed, patch: 8, dim: $3}"
    for _ in $(seq "$2"); do echo "    - {type: transformer, heads: 16}"; done
    echo "    - {type: layernorm}"
    echo "    - {type: conv, channels: 256, kernel: 1}"
    echo "    - {type: unpatch, patch: 8, channels: 4, grid: [$grid, $grid]}"
    echo "pipeline: {stages: 8, schedule: $4, microbatches: 16, memory_budget: 1.0e10}"
    echo "loss: mse"
    echo "optimizer: {type: adamw, lr: 1.0e-4}"
    echo "data: {type: external, batch: 64}"
  } > "$1"
}
write_config "$dir/large.yaml" 24 2048 1f1b 256
write_config "$dir/large_auto.yaml" 24 2048 auto 256
write_config "$dir/small.yaml" 8 64 1f1b 32

# Runs plan, printing its output; fails when it takes over 20 s or 1 GiB (the child's peak resident set).
plan_within_limits() {  # $1: what, then plan's arguments
  local what="$1"
  shift
  python3 - "$SLUICE" "$@" > "$dir/out.txt" <<'PY'
import resource, subprocess, sys, time
start = time.monotonic()
done = subprocess.run([sys.argv[1], "plan"] + sys.argv[2:], stdout=subprocess.PIPE, text=True)
seconds = time.monotonic() - start
peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
sys.stdout.write(done.stdout)
print(f"plan took {seconds:.2f} s, peak resident {peak_kib / 1024:.1f} MiB, exit {done.returncode}")
sys.exit(0 if done.returncode == 0 and seconds <= 20 and peak_kib <= 1024 * 1024 else 1)
PY
  local status=$?
  cat "$dir/out.txt"
  [ "$status" -eq 0 ] || fail "$what: plan failed or exceeded 20 s / 1 GiB"
}

plan_within_limits "1f1b" "$dir/large.yaml"
grep -q "^total: 1211750656 parameters" "$dir/out.txt" || fail "1f1b: the model is not the 1.2 B-parameter one"
grep -q "estimated from the layer shapes" "$dir/out.txt" || fail "1f1b: the stash is not said to be estimated"
for kind in "1f1b, 1 chunk(s) per rank (planned)" "gpipe, 1 chunk(s) per rank" "interleaved, 2 chunk(s) per rank" \
  "zb-h1, 1 chunk(s) per rank" "zb-v, 2 chunk(s) per rank"; do
  grep -qF "$kind: step" "$dir/out.txt" || fail "text: no per-rank table for $kind"
done
grep -Eq "^    0 +0-[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +0\.[0-9]{4} +(yes|no)$" "$dir/out.txt" ||
  fail "text: no per-rank row (rank, layers, parameters, static bytes, stash, bubble, fits)"
plan_within_limits "auto" "$dir/large_auto.yaml"
grep -q "pipeline.schedule auto: .* candidates, budget 10000000000 bytes per rank" "$dir/out.txt" ||
  fail "auto: no candidate table against the budget"
grep -Eq "^    1f1b +1 +16 +none +[0-9.e+]+ +[0-9]+ +no$" "$dir/out.txt" || fail "auto: 1f1b without recompute should not fit"
grep -Eq "^--> .* yes$" "$dir/out.txt" || fail "auto: the chosen candidate does not fit"
json="$("$SLUICE" plan "$dir/large.yaml" --format json)" || fail "json plan exited $?"
echo "$json" | grep -q '"stash_estimated":true' || fail "json: stash_estimated is not true"
# The per-rank table of every schedule kind, against what this test computes itself: parameters from the layers'
# formulas over the rank's layers, the bubble from the plan's own simulation, and the fit from the bytes.
echo "$json" | python3 -c '
import json, sys
plan = json.load(sys.stdin)
D, T, tokens_in = 2048, 32 * 32, 4 * 8 * 8
params = [tokens_in * D + D + D * T]                     # patch_embed: a patch conv and the position embedding
params += [12 * D * D + 13 * D] * 24                     # transformer: norms, qkv, proj, fc1, fc2 with biases
params += [2 * D, D * 256 + 256, 0]                      # layernorm, the 1x1 conv, unpatch
assert sum(params) == 1211750656, sum(params)
tables = plan["stage_tables"]
kinds = [t["schedule"] for t in tables]
assert kinds[0] == "1f1b" and tables[0]["planned"], kinds
assert sorted(kinds) == sorted(["gpipe", "1f1b", "interleaved", "zb-h1", "zb-v"]), kinds
fail = 0
for t in tables:
    ranks = t["ranks"]
    assert len(ranks) == 8, (t["schedule"], len(ranks))
    covered = sorted(l for r in ranks for first, last in r["layers"] for l in range(first, last))
    assert covered == list(range(28)), (t["schedule"], covered)
    assert all(len(r["layers"]) == t["chunks"] for r in ranks), t["schedule"]
    for i, r in enumerate(ranks):
        expected = sum(params[l] for first, last in r["layers"] for l in range(first, last))
        if r["parameters"] != expected: print("FAIL:", t["schedule"], "rank", i, r["parameters"], "!=", expected); fail = 1
        if r["static_bytes"] != 16 * expected: print("FAIL:", t["schedule"], "rank", i, "static bytes"); fail = 1
        if not 0 <= r["bubble"] <= 1: print("FAIL:", t["schedule"], "rank", i, "bubble", r["bubble"]); fail = 1
        if r["fits"] != (r["static_bytes"] + r["stash_bytes"] <= 1e10): print("FAIL: fits", t["schedule"], i); fail = 1
for i, r in enumerate(tables[0]["ranks"]):  # the planned one: the simulation and the stash the plan reports above
    if abs(r["bubble"] - plan["idle"][i] / plan["makespan"]) > 1e-12: print("FAIL: bubble of rank", i); fail = 1
    if r["stash_bytes"] != plan["peak_stash_bytes"][i]: print("FAIL: stash of rank", i); fail = 1
assert [r["fits"] for r in tables[0]["ranks"]].count(False) > 0, "1f1b without recompute fits everywhere"
steps = {t["schedule"]: t["makespan"] for t in tables}  # a kind of 2 chunks runs pieces half as long: shorter
if not steps["zb-v"] < steps["interleaved"] < steps["1f1b"]: print("FAIL: steps by kind", steps); fail = 1
sys.exit(fail)
' || fail "json: the per-rank tables disagree with the layers' parameters, the simulation or the budget"
small="$("$SLUICE" plan "$dir/small.yaml" --format json)" || fail "small plan exited $?"
echo "$small" | grep -q '"stash_estimated":false' || fail "a small model's stash is not measured"

# A kind whose chunks the configured split does not fit is named with the reason, the others still planned.
split="$("$SLUICE" plan "$dir/small.yaml" --set 'pipeline.split=[2,2,1,1,1,1,2,2]')" || fail "split plan exited $?"
echo "$split" | grep -q "^zb-v, 2 chunk(s) per rank: cannot run this layout: pipeline.split has 8 entries" ||
  fail "split: zb-v is not refused with the reason"
echo "$split" | grep -q "^zb-h1, 1 chunk(s) per rank: step" || fail "split: zb-h1 is not planned"

[ "$failures" -eq 0 ] && echo "PASS" || exit 1
