#!/bin/bash
# `sluice plan`'s peak stash per rank counts what pipeline.recompute_halos: stash keeps (docs/DOMAIN.md "Recompute
# and halos"): under recompute on a split field, each dropped conv's and linear upsampling's halo-filled input per
# micro-batch. Against `exchange` the peak stash grows by exactly those bytes (by hand below); without recompute, or
# without a domain, the setting changes nothing.
# Usage: plan_halo_stash_test.sh <path to the sluice binary>
set -u
SLUICE="$1"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
dir="${TEST_TMPDIR:-/tmp}/plan_halo_stash"
mkdir -p "$dir"

# 2 x 2 blocks of 8 x 8 (4 x 4 after the pool). The layers that fill a halo, and their padded inputs per sample:
#   0 conv 3x3 on 2 channels:           2 · (8 + 2)² · 4 bytes =  800
#   3 conv 3x3 on 4 channels, pooled:   4 · (4 + 2)² · 4       =  576
#   4 linear upsampling, 4 channels:    4 · (4 + 2)² · 4       =  576 (width 1 each side, at its input's level)
#   6 conv 1x1 on 8 channels:           8 · 8² · 4             = 2048 (a width-0 fill: a copy of the input)
# data.batch 2 in 1 micro-batch: 2 rows in flight on the one stage.
cat > "$dir/unet.yaml" <<'YAML'
model:
  inputs: [2, 16, 16]
  layers:
    - {type: conv, channels: 4, kernel: 3, padding: periodic}
    - {type: gelu, name: s}
    - {type: pool, kernel: 2, mode: max}
    - {type: conv, channels: 4, kernel: 3, padding: periodic}
    - {type: upsample, factor: 2, mode: linear}
    - {type: concat, from: s}
    - {type: conv, channels: 1, kernel: 1}
pipeline: {stages: 1, microbatches: 1, domain: [2, 2]}
loss: mse
data: {type: synthetic, batch: 2}
YAML

sed 's/, domain: \[2, 2\]//' "$dir/unet.yaml" > "$dir/whole.yaml"  # the same model, no pipeline.domain
config="$dir/unet.yaml"

stash() {  # plan's peak stash of rank 0 for $config, with the given --set overrides
  local args=()
  for s in "$@"; do args+=(--set "$s"); done
  "$SLUICE" plan "$config" --format json "${args[@]}" |
    python3 -c 'import json, sys; print(int(json.load(sys.stdin)["peak_stash_bytes"][0]))'
}
expect_more() {  # what, the recompute settings, the bytes stash keeps more than exchange
  local what="$1" extra="$3"
  local exchanged stashed
  exchanged="$(stash $2 'pipeline.recompute_halos=exchange')"
  stashed="$(stash $2 'pipeline.recompute_halos=stash')"
  [ -n "$exchanged" ] && [ -n "$stashed" ] || { fail "$what: plan failed"; return; }
  [ $((stashed - exchanged)) -eq "$extra" ] ||
    fail "$what: peak stash with stash $stashed, with exchange $exchanged: expected $extra more"
}
# Full recompute drops all four: 2 rows · (800 + 576 + 576 + 2048).
expect_more "full recompute" "pipeline.recompute=full" 8000
# Selective recompute of the pooled conv and the upsampling: 2 · (576 + 576).
expect_more "selective recompute" "pipeline.recompute=selective pipeline.recompute_layers=[3,4]" 2304
# Nothing is dropped without recompute; without a domain no layer fills a halo.
expect_more "no recompute" "pipeline.recompute=none" 0
config="$dir/whole.yaml"
expect_more "no domain" "pipeline.recompute=full" 0

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all plan halo stash checks passed"
