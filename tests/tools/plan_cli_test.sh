#!/bin/bash
# `sluice plan` end to end: JSON fields and a closed-form bubble, then bad arguments exit with 2.
# Usage: plan_cli_test.sh <path to the sluice binary>
set -u
SLUICE="$1"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

json="$("$SLUICE" plan --schedule 1f1b --stages 4 --microbatches 8 --format json)" || fail "json run exited $?"
for field in schedule stages microbatches chunks makespan bubble_fraction peak_inflight actions; do
  echo "$json" | grep -q "\"$field\":" || fail "json lacks \"$field\""
done
# 1F1B bubble = (p-1)/(m+p-1) = 3/11; peak in-flight on rank s = min(m, p-s).
python3 - "$json" <<'PY' || fail "json values"
import json, sys
plan = json.loads(sys.argv[1])
assert abs(plan["bubble_fraction"] - 3 / 11) < 1e-12, plan["bubble_fraction"]
assert plan["peak_inflight"] == [4, 3, 2, 1], plan["peak_inflight"]
assert plan["actions"][0][:2] == ["0F0", "0SEND_F0"], plan["actions"][0][:2]
assert len(plan["actions"]) == 4
PY

"$SLUICE" plan --schedule zb-h1 --stages 4 --microbatches 8 | grep -q "rank 3 |" || fail "text timeline missing"
# Issue 15's first repro: the unit-cost lowering replayed 41.5 in posting order against 35.5 compute only. `plan`
# lowers with the costs it simulates and reports the replayed makespans next to the compute-only one.
repro="$("$SLUICE" plan --schedule zb-h1 --stages 4 --microbatches 8 --cost-f 2 --cost-i 1 --cost-w 0.5 --format json)" \
  || fail "repro run exited $?"
python3 - "$repro" <<'PY' || fail "posting-order makespan of the zb-h1 repro"
import json, sys
plan = json.loads(sys.argv[1])
assert plan["makespan"] == 35.5, plan["makespan"]
assert plan["makespan_posting_order"] <= 35.5 * 1.01, plan["makespan_posting_order"]
assert plan["makespan_blocking"] >= plan["makespan"], plan["makespan_blocking"]
PY
"$SLUICE" plan --schedule zb-h1 --stages 4 --microbatches 8 | grep -q "posting order (NCCL)" || fail "text lacks transfers"
# Issue 15's blocking repro: interleaved p=8 m=32 with unit costs replayed 294-296 with blocking pairs against 213
# compute only; the costed lowering reaches 213 both ways, so plan reports no shortfall.
interleaved="$("$SLUICE" plan --schedule interleaved --stages 8 --microbatches 32 --chunks 2)" || fail "interleaved run"
echo "$interleaved" | grep -q "makespan 213 when transfers complete in posting order (NCCL), 213 with blocking" ||
  fail "interleaved p=8 m=32 blocking replay: $(echo "$interleaved" | grep 'lowered SEND/RECV')"
echo "$interleaved" | grep -q "no SEND/RECV placement" && fail "interleaved p=8 m=32 reports a shortfall"
# With a message latency a blocking sender waits out every transfer: no placement reaches 1%, and plan says by how much.
latency="$("$SLUICE" plan --schedule 1f1b --stages 4 --microbatches 8 --latency 0.25)" || fail "latency run"
echo "$latency" | grep -q "no SEND/RECV placement found within 1% of compute only for blocking send/recv pairs: " ||
  fail "latency case lacks the blocking shortfall line"
echo "$latency" | grep -q "for posting order (NCCL)" && fail "latency case reports a posting-order shortfall"
trace="$(mktemp -d)/trace.json"
"$SLUICE" plan --schedule zb-v --stages 2 --microbatches 4 --format chrome --output "$trace" || fail "chrome run"
grep -q '"traceEvents"' "$trace" || fail "chrome trace lacks traceEvents"

# `sluice plan CONFIG`: the pipeline section chooses the schedule, flags override it, and the recompute policy
# shows in the stash (full recompute keeps only each stage's input) and in the makespan (I re-runs the forward).
# Links as fast as anything, so the split is by FLOPs alone (one linear layer and its activation per stage): the
# test is about recompute, not the partition.
config_dir="$(mktemp -d)"
write_config() {
  cat > "$config_dir/$1.yaml" <<YAML
model:
  inputs: 16
  layers:
    - {type: linear, outputs: 32}
    - {type: gelu}
    - {type: linear, outputs: 32}
    - {type: tanh}
    - {type: linear, outputs: 32}
    - {type: relu}
    - {type: linear, outputs: 4}
    - {type: tanh}
pipeline: {stages: 4, schedule: 1f1b, chunks: 1, microbatches: 8, recompute: $1, bandwidth: 1.0e18}
loss: mse
optimizer: {type: sgd, lr: 0.01}
data: {type: synthetic, batch: 64}
steps: 1
YAML
}
write_config none
write_config full
none_json="$("$SLUICE" plan "$config_dir/none.yaml" --format json)" || fail "plan CONFIG exited $?"
full_json="$("$SLUICE" plan "$config_dir/full.yaml" --format json)" || fail "plan CONFIG (full) exited $?"
flag_json="$("$SLUICE" plan "$config_dir/none.yaml" --microbatches 4 --schedule zb-v --format json)" ||
  fail "plan CONFIG with flags exited $?"
set_json="$("$SLUICE" plan "$config_dir/none.yaml" --set pipeline.recompute=full --format json)" ||
  fail "plan CONFIG --set exited $?"
[ "$set_json" = "$full_json" ] || fail "--set pipeline.recompute=full differs from the config that says it"
python3 - "$none_json" "$full_json" "$flag_json" <<'PY' || fail "plan CONFIG values"
import json, sys
none, full, flags = (json.loads(a) for a in sys.argv[1:])
assert (none["schedule"], none["stages"], none["microbatches"], none["chunks"]) == ("1f1b", 4, 8, 1), none
assert none["recompute"] == "none" and full["recompute"] == "full"
assert none["microbatch_rows"] == 8
# Uniform stages: the peak stash is the in-flight count times one stage's stash.
for rank, inflight in enumerate(none["peak_inflight"]):
    assert none["peak_stash_bytes"][rank] == inflight * none["stash_bytes_per_stage"][rank], none
for rank in range(4):
    assert full["peak_stash_bytes"][rank] < none["peak_stash_bytes"][rank], (full, none)
assert full["makespan"] == 11 * 4 and none["makespan"] == 11 * 3, (full["makespan"], none["makespan"])
assert (flags["schedule"], flags["microbatches"], flags["chunks"], flags["microbatch_rows"]) == ("zb-v", 4, 2, 16)
PY

expect_exit_2() {
  local stderr
  stderr="$("$SLUICE" "$@" 2>&1 >/dev/null)"
  local code=$?
  [ "$code" -eq 2 ] || fail "'$*' exited $code, expected 2"
  [ "$(echo "$stderr" | wc -l)" -eq 1 ] || fail "'$*' printed more than one stderr line: $stderr"
}
expect_exit_2 plan --schedule nope --stages 4 --microbatches 8
expect_exit_2 plan --schedule 1f1b --stages 0 --microbatches 8
expect_exit_2 plan --schedule zb-v --stages 4 --microbatches 8 --chunks 3
expect_exit_2 plan --schedule interleaved --stages 4 --microbatches 6 --chunks 1
expect_exit_2 plan --schedule 1f1b --stages 4 --microbatches 8 --format pdf
expect_exit_2 plan --schedule 1f1b --stages 4 --microbatches 8 --latency -1
expect_exit_2 plan --schedule 1f1b --stages 4 --microbatches 8 --set pipeline.stages=2
# A config's huge stage count is refused by name, like the --stages flag's (it once ended in std::bad_alloc).
huge_stderr="$("$SLUICE" plan "$config_dir/none.yaml" --set pipeline.stages=2147483647 2>&1 >/dev/null)"
huge_code=$?
[ "$huge_code" -eq 2 ] || fail "plan with pipeline.stages=2147483647 exited $huge_code, expected 2: $huge_stderr"
echo "$huge_stderr" | grep -q "pipeline.stages is 2147483647, more than plan can simulate (at most 1048576)" ||
  fail "huge pipeline.stages not named: $huge_stderr"
! echo "$huge_stderr" | grep -q -- "-[0-9]" || fail "a negative (overflowed) number in: $huge_stderr"

# A mistyped, enormous config name (here 120 000 characters, near the kernel's limit for one argument) is
# shortened in every command's error, not echoed whole.
long_path="/tmp/$(head -c 120000 /dev/zero | tr '\0' 'e')"
for command in "plan $long_path" "train $long_path" "submit $long_path --nodes 1 --dry-run"; do
  # shellcheck disable=SC2086  # the words of $command are the arguments
  long_stderr="$("$SLUICE" $command 2>&1 >/dev/null)" && fail "'${command:0:12}...' accepted a missing config"
  [ "${#long_stderr}" -lt 1000 ] || fail "'${command:0:12}...' printed ${#long_stderr} characters: ${long_stderr:0:300}"
  echo "$long_stderr" | grep -q "characters cut" || fail "'${command:0:12}...' did not shorten the name: ${long_stderr:0:300}"
done

# A skip from the first of three stages to the last: plan's lowered lists (the trainer's) send it straight from rank
# 0 to rank 2 and its gradient back; rank 1 has no skip message.
cat > "$config_dir/skip.yaml" <<YAML
model:
  inputs: 3
  layers:
    - {type: linear, outputs: 4, name: a}
    - {type: relu}
    - {type: linear, outputs: 4}
    - {type: add, from: a}
    - {type: linear, outputs: 2}
pipeline: {stages: 3, schedule: 1f1b, microbatches: 2, split: [1, 2, 2]}
data: {type: synthetic, batch: 4}
YAML
skip_json="$("$SLUICE" plan "$config_dir/skip.yaml" --format json)" || fail "skip plan exited $?"
python3 - "$skip_json" <<'PY' || fail "plan's skip messages"
import json, sys
actions = json.loads(sys.argv[1])["actions"]
assert "0SEND_SKIP0@2" in actions[0] and "0RECV_SKIP_GRAD1@2" in actions[0], actions[0]
assert "2RECV_SKIP1@0" in actions[2] and "2SEND_SKIP_GRAD0@0" in actions[2], actions[2]
assert not any("SKIP" in a for a in actions[1]), actions[1]
PY
# Under full recompute each stage stashes its input per micro-batch (2 rows): rank 0 its 3 columns, rank 2 the main
# 4 and the skip's 4, rank 1 only the main 4: the skip passes over it in its own messages.
skip_json="$("$SLUICE" plan "$config_dir/skip.yaml" --set pipeline.recompute=full --format json)" ||
  fail "skip plan (recompute full) exited $?"
python3 - "$skip_json" <<'PY' || fail "plan's stash with a skip passing over a stage"
import json, sys
stash = json.loads(sys.argv[1])["stash_bytes_per_stage"]
assert stash == [2 * 3 * 4, 2 * 4 * 4, 2 * 8 * 4], stash
PY

if [ "$failures" -ne 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "plan_cli_test: all checks passed"
