#!/bin/bash
# `sluice plan` on a config with a custom layer declared in the YAML (issue 27 item 7): `outputs: [..]` gives plan its
# shape and `cost: {flops, bytes}` its weight; a larger declared cost moves the split (the stages' stash changes);
# a custom layer without `outputs` is refused by name.
# Usage: plan_custom_layer_test.sh <path to the sluice binary>
set -u
SLUICE="$1"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
dir="${TEST_TMPDIR:-/tmp}/plan_custom"
mkdir -p "$dir"

write_config() {  # $1: file, $2: the custom layer's extra keys
  cat > "$1" <<YAML
model:
  inputs: [2, 16, 16]
  layers:
    - {type: conv, channels: 8, kernel: 3, padding: periodic}
    - {type: relu}
    - {type: custom, name: conv_a$2}
    - {type: relu}
    - {type: conv, channels: 8, kernel: 3, padding: periodic}
    - {type: relu}
    - {type: conv, channels: 2, kernel: 3, padding: periodic}
pipeline: {stages: 2, schedule: 1f1b, microbatches: 4}
optimizer: {type: sgd, lr: 0.01}
data: {type: external, batch: 16}
YAML
}

write_config "$dir/costly.yaml" ", outputs: [8, 16, 16], cost: {flops: 5000000, bytes: 16384}"
write_config "$dir/cheap.yaml" ", outputs: [8, 16, 16], cost: {flops: 100}"
cat > "$dir/undeclared.yaml" <<YAML
model:
  inputs: 8
  layers:
    - {type: linear, outputs: 8}
    - {type: custom, name: conv_a}
    - {type: linear, outputs: 4}
pipeline: {stages: 2, schedule: 1f1b, microbatches: 4}
optimizer: {type: sgd, lr: 0.01}
data: {type: external, batch: 16}
YAML

costly="$("$SLUICE" plan "$dir/costly.yaml" 2>&1)" || fail "plan of a declared custom layer exited $?: $costly"
echo "$costly" | grep -Eq "^2 +custom +\[8, 16, 16\] +0 +5M " || fail "layer table lacks the declared custom layer: $costly"
echo "$costly" | grep -q "makespan" || fail "no schedule simulated: $costly"
cheap="$("$SLUICE" plan "$dir/cheap.yaml" 2>&1)" || fail "plan of a cheap custom layer exited $?: $cheap"
echo "$cheap" | grep -Eq "^2 +custom +\[8, 16, 16\] +0 +100 " || fail "cheap custom layer's FLOPs: $cheap"
# The costly layer sits alone with the first conv on stage 0 (split [3, 4]); the cheap one lets stage 0 take more
# layers: the stages keep other stashes.
stash() { echo "$1" | sed -n '/peak stash bytes/,$p' | awk 'NR > 1 {print $1, $5}'; }
[ "$(stash "$costly")" != "$(stash "$cheap")" ] || fail "the declared cost did not move the split: $(stash "$costly")"

undeclared_stderr="$("$SLUICE" plan "$dir/undeclared.yaml" 2>&1 >/dev/null)"
code=$?
[ "$code" -ne 0 ] || fail "plan accepted a custom layer without outputs"
echo "$undeclared_stderr" | grep -q "custom layer 'conv_a'.*declares no outputs" ||
  fail "the undeclared custom layer is not named: $undeclared_stderr"

if [ "$failures" -ne 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "plan_custom_layer_test: all checks passed"
