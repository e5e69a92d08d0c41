#!/bin/bash
# pipeline.domain on the command line (issue 32, configuration and layout): `sluice plan CONFIG` prints the block
# grid, each block's extents and per layer the halo and block bytes (numbers worked out by hand below), refuses a
# split the model cannot run on naming the layer; `sluice train` trains on the split, each rank on its own block of
# the samples, with the undecomposed run's results bit for bit.
# Usage: domain_cli_test.sh SLUICE MAKE_HDF5_DATA
set -u
SLUICE="$1"
MAKE_HDF5="$2"
source "$(dirname "$0")/cli_test_env.sh"

cat > "$work/unet.yaml" <<'YAML'
model:
  inputs: [2, 16, 16]
  layers:
    - {type: conv, channels: 4, kernel: 3, padding: zeros, name: enc}
    - {type: relu}
    - {type: pool, kernel: 2, mode: max, name: down}
    - {type: conv, channels: 8, kernel: 3, padding: periodic}
    - {type: upsample, factor: 2}
    - {type: concat, from: enc}
    - {type: conv, channels: 1, kernel: 1}
pipeline: {stages: 1, domain: [2, 2]}
data: {type: synthetic, batch: 2}
YAML

out="$("$SLUICE" plan "$work/unet.yaml" 2>&1)" || fail "plan exited $?: $out"
expect() { echo "$out" | grep -qF -- "$1" || fail "plan output lacks \"$1\""; }
expect "domain [2, 2]: 4 blocks of the field [2, 16, 16] (the even split sluice train uses; canonical tile [2, 2])"
# Blocks row-major, the last dimension fastest: block 1 is the second along dimension 2.
expect "1      [0, 1]          [0, 8]          [8, 8]"
expect "3      [1, 1]          [8, 8]          [8, 8]"
# Layer 0, a zero-padded 3x3 conv on 2 channels of 8 x 8 blocks: what halo_fill sends, dimension 1 first: one
# strip 1 x 8 (the other side is the field's edge: zeros, no message), then dimension 2 one strip 10 x 1 spanning
# the filled halos (the corners): 18 points · 2 channels · 4 bytes = 144 per block, four blocks 576; no backward
# halo (the model's first layer computes no input gradient); its output on a block: 4 channels · 64 points · 4 = 1024.
expect "0      conv            [1, 1]/[1, 1]       576           0             1024"
# Layer 3, after the pool: 4 x 4 blocks of 4 channels: (6·6 − 16) · 4 · 4 = 320 per block, 1280; backward 8
# channels, 2560; 8·16·4 = 512 out.
expect "3      conv            [1, 1]/[1, 1]       1280          2560          512"
# Layer 4, nearest upsample: no halo; output 8 channels on 8 x 8 = 2048.
expect "4      upsample        [0, 0]/[0, 0]       0             0             2048"
# Forward 576 + 1280 = 1856, backward 2560; 2 rows per step: 2 · 4416.
expect "halo bytes per sample: 1856 forward, 2560 backward; 8832 per optimizer step of one replica (2 rows)"

# The same numbers in JSON, every block listed.
json="$("$SLUICE" plan "$work/unet.yaml" --format json)" || fail "plan --format json exited $?"
python3 - "$json" <<'PY' || fail "plan json domain: $json"
import json, sys
domain = json.loads(sys.argv[1])["domain"]
assert domain["blocks"] == [2, 2] and domain["tile"] == [2, 2], domain
assert domain["block_offsets"] == [[0, 0], [0, 8], [8, 0], [8, 8]], domain["block_offsets"]
assert domain["block_extents"] == [[8, 8]] * 4, domain["block_extents"]
assert domain["halo_bytes_per_sample"] == [576, 0, 0, 1280, 0, 0, 0], domain["halo_bytes_per_sample"]
assert domain["halo_bytes_backward_per_sample"] == [0, 0, 0, 2560, 0, 0, 0], domain

assert domain["block_output_bytes"] == [1024, 1024, 256, 512, 2048, 3072, 256], domain["block_output_bytes"]
assert domain["halo_bytes_per_step"] == 8832, domain["halo_bytes_per_step"]
PY
"$SLUICE" plan "$work/unet.yaml" --set 'pipeline.domain=[1, 1]' --format json | grep -q '"domain"' &&
  fail "an unsplit plan's JSON has a domain"
# The stash per rank is one block's: on 2 x 2 equal blocks about a quarter of the undecomposed field's (the plain
# layers built on an 8 x 8 block; a few hundred bytes of what they keep do not scale with the points).
stash() { "$SLUICE" plan "$work/unet.yaml" --format json "$@" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["peak_stash_bytes"][0])'; }
split_stash="$(stash)"; whole_stash="$(stash --set 'pipeline.domain=[1, 1]')"
[ -n "$split_stash" ] && [ -n "$whole_stash" ] && [ "$(python3 -c "print($whole_stash <= 4 * $split_stash <= 1.05 * $whole_stash)")" = True ] ||
  fail "plan's peak stash per rank: split $split_stash, undecomposed $whole_stash"

# pipeline.schedule auto sizes a rank's stash from its block: a budget between the split's smallest need and the
# undecomposed field's refuses the field and accepts the split (the budget printed in whole bytes).
need() {  # the smallest candidate's bytes per rank, from the refusal of a 1-byte budget
  "$SLUICE" plan "$work/unet.yaml" --set "pipeline.domain=$1" --set pipeline.schedule=auto \
    --set pipeline.memory_budget=1 2>&1 | grep -o 'the smallest needs [0-9]*' | grep -o '[0-9]*$'
}
field_need="$(need '[1, 1]')"; block_need="$(need '[2, 2]')"
[ -n "$field_need" ] && [ -n "$block_need" ] && [ "$block_need" -lt "$field_need" ] ||
  fail "auto's smallest need per rank: split '$block_need', undecomposed '$field_need'"
budget=$(( (field_need + block_need) / 2 ))
refused="$("$SLUICE" plan "$work/unet.yaml" --set 'pipeline.domain=[1, 1]' --set pipeline.schedule=auto \
  --set "pipeline.memory_budget=$budget" 2>&1)" && fail "the undecomposed field fits $budget: $refused"
echo "$refused" | grep -qF "no schedule fits pipeline.memory_budget $budget bytes per rank; the smallest needs $field_need" ||
  fail "the refusal: $refused"
"$SLUICE" plan "$work/unet.yaml" --set pipeline.schedule=auto --set "pipeline.memory_budget=$budget" >/dev/null 2>&1 ||
  fail "the 2 x 2 split does not fit $budget (one block needs $block_need)"

# A split off the pool's factor: 3 blocks of 16 points are 6, 5, 5 — refused naming the layer and the dimension.
bad="$("$SLUICE" plan "$work/unet.yaml" --set 'pipeline.domain=[3, 2]' 2>&1)" && fail "plan accepted [3, 2]"
echo "$bad" | grep -qF 'layer 2 (pool "down") downsamples spatial dimension 1 by a cumulative factor 2' ||
  fail "[3, 2] refusal: $bad"
# The JSON format checks the split too.
"$SLUICE" plan "$work/unet.yaml" --set 'pipeline.domain=[3, 2]' --format json > /dev/null 2>&1 &&
  fail "plan --format json accepted [3, 2]"
# A layer that needs the whole sample: refused at its entry.
bad="$("$SLUICE" plan "$work/unet.yaml" --set 'model.layers.3={type: spectral_conv, channels: 8, modes: [2, 2]}' 2>&1)" &&
  fail "plan accepted a split spectral_conv"
echo "$bad" | grep -qF "layer 3 (spectral_conv) cannot run on a split field" || fail "spectral refusal: $bad"
# Reflect padding makes its halo at the field's edges on the block, like zeros: the same bytes.
"$SLUICE" plan "$work/unet.yaml" --set model.layers.0.padding=reflect |
  grep -qF "0      conv            [1, 1]/[1, 1]       576           0             1024" ||
  fail "plan's halo bytes of a reflect-padded conv are not the zero-padded one's"
# Without a split nothing is printed about one.
"$SLUICE" plan "$work/unet.yaml" --set 'pipeline.domain=[1, 1]' | grep -q "^domain" && fail "an unsplit plan prints a domain"

# sluice train on the split: 4 ranks, each generating (synthetic) or reading (hdf5) only its 8 x 8 block of every
# sample, end with the parameters and optimizer state of the undecomposed run on 1 rank bit for bit, and log the
# same losses. The undecomposed run is pipeline.domain [1, 1] (the same tiled code on one block); without a
# domain the plain layers agree to rounding only (docs/DOMAIN.md). Layer 0 pads with zeros (walls at the field's
# edges: nothing sent across them), layer 3 wraps periodically.
MPIRUN=(timeout 120 mpirun --allow-run-as-root --oversubscribe --mca btl self,vader)
TRAIN=(--set steps=3 --set checkpoint.every=3)
same_state() { h5diff -q "$1" "$2" /model /model && h5diff -q "$1" "$2" /optimizer /optimizer; }
losses() { grep '^step ' "$1" | awk '{print $2, $4}'; }
split_vs_whole() {  # NAME EXTRA_SETTINGS..: trains split and whole, compares
  local name="$1"
  shift
  "${MPIRUN[@]}" -np 4 "$SLUICE" train "$work/unet.yaml" "${TRAIN[@]}" "$@" --set checkpoint.dir="$work/$name-split" \
    >"$work/$name-split.log" 2>&1 || fail "$name: split run: $(cat "$work/$name-split.log")"
  "${MPIRUN[@]}" -np 1 "$SLUICE" train "$work/unet.yaml" "${TRAIN[@]}" "$@" --set 'pipeline.domain=[1, 1]' \
    --set checkpoint.dir="$work/$name-whole" >"$work/$name-whole.log" 2>&1 ||
    fail "$name: undecomposed run: $(cat "$work/$name-whole.log")"
  [ "$(losses "$work/$name-split.log" | wc -l)" -eq 3 ] || fail "$name: the split run logged no 3 steps"
  [ "$(losses "$work/$name-split.log")" = "$(losses "$work/$name-whole.log")" ] ||
    fail "$name: losses differ: $(losses "$work/$name-split.log") vs $(losses "$work/$name-whole.log")"
  same_state "$work/$name-split/ckpt_00000003.h5" "$work/$name-whole/ckpt_00000003.h5" ||
    fail "$name: the split run's checkpoint differs from the undecomposed run's"
}
split_vs_whole synthetic
# Reflect padding at layer 3 (forward and backward halos; tiles of 2 there, wider than its halo of 1).
split_vs_whole reflect --set model.layers.3.padding=reflect --set 'pipeline.domain_tile=[4, 4]'
# The start report's halo bytes per call on paper are what every rank sent in the last call (the summary).
paper="$(grep -o 'halo bytes per call on paper [0-9]* ([0-9]* messages)' "$work/synthetic-split.log" | sort -u)"
[ "$(echo "$paper" | wc -l)" -eq 1 ] || fail "the blocks' paper halo bytes: $paper"
bytes="$(echo "$paper" | awk '{print $7}')" messages="$(echo "$paper" | awk '{print $8}' | tr -d '(')"
grep -qF "halo bytes sent per rank (last call) [$bytes, $bytes, $bytes, $bytes] in [$messages, $messages, $messages, $messages] messages" \
  "$work/synthetic-split.log" || fail "measured halo bytes are not the paper's $bytes in $messages: $(grep '^done' "$work/synthetic-split.log")"
# And its tile-gather bytes on paper (runtime::domain_gather_bytes) are what every rank's gathers sent.
gathered="$(grep -o 'tile-gather bytes [0-9]*,' "$work/synthetic-split.log" | sort -u | tr -dc '0-9\n')"
[ "$(echo "$gathered" | wc -l)" -eq 1 ] && [ -n "$gathered" ] || fail "the blocks' paper tile-gather bytes: $gathered"
grep -qF "tile-gather bytes sent [$gathered, $gathered, $gathered, $gathered]" "$work/synthetic-split.log" ||
  fail "measured tile-gather bytes are not the paper's $gathered: $(grep '^done' "$work/synthetic-split.log")"
# sluice plan counts the same bytes (config::halo_sends): its step's halo over the 4 equal blocks is each block's
# paper number (one call per step here: batch 2, no accumulation).
plan_step="$("$SLUICE" plan "$work/unet.yaml" --format json |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["domain"]["halo_bytes_per_step"])')"
[ -n "$plan_step" ] && [ $((plan_step / 4)) -eq "$bytes" ] && [ $((plan_step % 4)) -eq 0 ] ||
  fail "plan's halo bytes per step $plan_step are not 4 blocks x the start report's $bytes"
# The comparison can fail: another seed gives other parameters.
"${MPIRUN[@]}" -np 1 "$SLUICE" train "$work/unet.yaml" "${TRAIN[@]}" --set 'pipeline.domain=[1, 1]' --set seed=2 \
  --set checkpoint.dir="$work/seed2" >/dev/null 2>&1 || fail "seed 2 run failed"
same_state "$work/synthetic-split/ckpt_00000003.h5" "$work/seed2/ckpt_00000003.h5" >/dev/null 2>&1 &&
  fail "h5diff did not see another seed"
# HDF5 fields stored [N, C, D1, D2]: each rank reads its block's hyperslab.
"$MAKE_HDF5" "$work/fields.h5" 8 512 256 2,16,16 1,16,16 || fail "make_hdf5_data failed"
split_vs_whole hdf5 --set data.type=hdf5 --set data.path="$work/fields.h5"

# rank_order auto picking an order whose blocks are not rank % blocks: 2 stages x [2, 1] blocks on 2 "nodes" of 2
# ranks (SLUICE_NODE_ID). The stage boundary (the pool's output and the skip, 20480 bytes a step) outweighs the
# halos of the one split dimension (4096) and the tile gathers (one tile per block), so auto keeps a block's two
# stages on one node (stages innermost: block = rank / 2). Each rank must read the block the trainer gave it
# (before the fix sluice train cut its data from the layout before start, block = rank % 2, and stopped at its
# block check); the run ends with the undecomposed 2-stage run's parameters and losses bit for bit.
AUTO=(--set pipeline.stages=2 --set 'pipeline.split=[3, 4]' --set 'pipeline.domain=[2, 1]'
      --set 'pipeline.domain_tile=[8, 16]' --set pipeline.rank_order=auto)
"${MPIRUN[@]}" -np 2 env SLUICE_NODE_ID=0 "$SLUICE" train "$work/unet.yaml" "${TRAIN[@]}" "${AUTO[@]}"   --set checkpoint.dir="$work/auto-split" :   -np 2 env SLUICE_NODE_ID=1 "$SLUICE" train "$work/unet.yaml" "${TRAIN[@]}" "${AUTO[@]}"   --set checkpoint.dir="$work/auto-split" >"$work/auto-split.log" 2>&1 || fail "auto split run: $(cat "$work/auto-split.log")"
grep -qE "rank order (stages_blocks_replicas|replicas_stages_blocks) \(auto, 2 node\(s\)\)" "$work/auto-split.log" ||
  fail "auto did not keep a block's stages on one node: $(grep 'rank order' "$work/auto-split.log")"
grep -qF "rank 1: replica 0, pipeline rank 1, domain block 0" "$work/auto-split.log" ||
  fail "rank 1 does not hold stage 1 of block 0: $(cat "$work/auto-split.log")"
"${MPIRUN[@]}" -np 2 "$SLUICE" train "$work/unet.yaml" "${TRAIN[@]}" "${AUTO[@]}" --set 'pipeline.domain=[1, 1]'   --set checkpoint.dir="$work/auto-whole" >"$work/auto-whole.log" 2>&1 || fail "auto whole run: $(cat "$work/auto-whole.log")"
[ "$(losses "$work/auto-split.log" | wc -l)" -eq 3 ] || fail "auto: the split run logged no 3 steps"
[ "$(losses "$work/auto-split.log")" = "$(losses "$work/auto-whole.log")" ] ||
  fail "auto: losses differ: $(losses "$work/auto-split.log") vs $(losses "$work/auto-whole.log")"
same_state "$work/auto-split/ckpt_00000003.h5" "$work/auto-whole/ckpt_00000003.h5" ||
  fail "auto: the split run's checkpoint differs from the undecomposed run's"

# --profile measures a whole sample's costs per stage: refused with a split, before anything runs.
bad="$("${MPIRUN[@]}" -np 1 "$SLUICE" train "$work/unet.yaml" "${TRAIN[@]}" --set checkpoint.dir="$work/p" \
  --profile "$work/p.json" 2>&1)" &&
  fail "train --profile accepted a split"
echo "$bad" | grep -qF "sluice train --profile with pipeline.domain (4 blocks) is not supported" ||
  fail "--profile refusal: $bad"
finish "domain"
