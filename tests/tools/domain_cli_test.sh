#!/bin/bash
# pipeline.domain on the command line (issue 32, configuration and layout): `sluice plan CONFIG` prints the block
# grid, each block's extents and per layer the halo and block bytes (numbers worked out by hand below), refuses a
# split the model cannot run on naming the layer; `sluice train` refuses a split until its data sources give blocks.
# Usage: domain_cli_test.sh SLUICE
set -u
SLUICE="$1"
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
# Layer 0, a 3x3 conv on 2 channels of 8 x 8 blocks: each block receives the ring 10·10 − 8·8 = 36 points,
# 36 · 2 channels · 4 bytes = 288, four blocks 1152; backward the ring of the output gradient's 4 channels, 2304;
# its output on a block: 4 channels · 64 points · 4 = 1024.
expect "0      conv            [1, 1]/[1, 1]       1152          2304          1024"
# Layer 3, after the pool: 4 x 4 blocks of 4 channels: (6·6 − 16) · 4 · 4 = 320 per block, 1280; backward 8
# channels, 2560; 8·16·4 = 512 out.
expect "3      conv            [1, 1]/[1, 1]       1280          2560          512"
# Layer 4, nearest upsample: no halo; output 8 channels on 8 x 8 = 2048.
expect "4      upsample        [0, 0]/[0, 0]       0             0             2048"
# Forward 1152 + 1280 = 2432, backward 2304 + 2560 = 4864; 2 rows per step: 2 · 7296.
expect "halo bytes per sample: 2432 forward, 4864 backward; 14592 per optimizer step of one replica (2 rows)"

# The same numbers in JSON, every block listed.
json="$("$SLUICE" plan "$work/unet.yaml" --format json)" || fail "plan --format json exited $?"
python3 - "$json" <<'PY' || fail "plan json domain: $json"
import json, sys
domain = json.loads(sys.argv[1])["domain"]
assert domain["blocks"] == [2, 2] and domain["tile"] == [2, 2], domain
assert domain["block_offsets"] == [[0, 0], [0, 8], [8, 0], [8, 8]], domain["block_offsets"]
assert domain["block_extents"] == [[8, 8]] * 4, domain["block_extents"]
assert domain["halo_bytes_per_sample"] == [1152, 0, 0, 1280, 0, 0, 0], domain["halo_bytes_per_sample"]
assert domain["halo_bytes_backward_per_sample"] == [2304, 0, 0, 2560, 0, 0, 0], domain

assert domain["block_output_bytes"] == [1024, 1024, 256, 512, 2048, 3072, 256], domain["block_output_bytes"]
assert domain["halo_bytes_per_step"] == 14592, domain["halo_bytes_per_step"]
PY
"$SLUICE" plan "$work/unet.yaml" --set 'pipeline.domain=[1, 1]' --format json | grep -q '"domain"' &&
  fail "an unsplit plan's JSON has a domain"

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
# Without a split nothing is printed about one.
"$SLUICE" plan "$work/unet.yaml" --set 'pipeline.domain=[1, 1]' | grep -q "^domain" && fail "an unsplit plan prints a domain"

# sluice train: an honest refusal, on every rank, before anything runs.
train="$(timeout 120 mpirun --allow-run-as-root --oversubscribe -np 1 --mca btl self,vader "$SLUICE" train \
  "$work/unet.yaml" 2>&1)"
code=$?
[ "$code" -ne 0 ] || fail "train with a domain split exited 0"
echo "$train" | grep -qF "pipeline.domain [2, 2] (4 blocks): sluice train cannot train on a split yet" ||
  fail "train refusal: $train"
finish "domain"
