#!/bin/bash
# `sluice export CHECKPOINT OUT`: a model-only copy of a checkpoint a training run wrote.
#  1. the export holds /model equal to the checkpoint's and empty /optimizer, /accumulation and /samples groups,
#     carries export = "model", passes `sluice inspect` (every checksum, the manifest) and h5dump, and is smaller;
#  2. a directory means its latest checkpoint;
#  3. a run cannot resume from an export: refused, naming it as a model-only export;
#  4. a missing input, a corrupt one (one flipped bit) and OUT naming the input are refused with a message naming
#     the file, and nothing is written.
# Usage: export_cli_test.sh SLUICE CONFIG
set -u
SLUICE="$1"
CONFIG="$2"
source "$(dirname "$0")/cli_test_env.sh"
MPIRUN=(mpirun --allow-run-as-root --oversubscribe -np 2 --mca btl self,vader)
train() { timeout 300 "${MPIRUN[@]}" "$SLUICE" train "$CONFIG" --set pipeline.stages=2 "$@"; }
size() { stat -c %s "$1"; }

# --- 1. export of a trained checkpoint ---------------------------------------------------------------------
train --set steps=2 --set checkpoint.dir="$work/a" --set checkpoint.every=2 >"$work/a.log" 2>&1 || fail "training: $(cat "$work/a.log")"
ck="$work/a/ckpt_00000002.h5"
timeout 120 "$SLUICE" export "$ck" "$work/model.h5" >"$work/e.log" 2>&1 || fail "export: $(cat "$work/e.log")"
grep -q "wrote model-only export $work/model.h5 (" "$work/e.log" || fail "export did not report: $(cat "$work/e.log")"
h5diff -q "$ck" "$work/model.h5" /model /model || fail "the export's /model differs from the checkpoint's"
header="$(h5dump -H "$work/model.h5")" || fail "h5dump cannot read the export"
for item in 'GROUP "model"' 'GROUP "optimizer"' 'GROUP "accumulation"' 'GROUP "samples"' 'GROUP "train"' \
  'ATTRIBUTE "config"' 'ATTRIBUTE "export"' 'ATTRIBUTE "format_version"'; do
  echo "$header" | grep -qF "$item" || fail "the export has no $item"
done
echo "$header" | grep -qF 'DATASET "exp_avg_sq"' && fail "the export holds optimizer state"
h5dump -a /export "$work/model.h5" | grep -qF '"model"' || fail "the export attribute is not \"model\""
"$SLUICE" inspect "$work/model.h5" >"$work/i.log" 2>&1 || fail "sluice inspect refuses the export: $(cat "$work/i.log")"
grep -q "^export: *model (model-only" "$work/i.log" || fail "sluice inspect does not say it is an export: $(cat "$work/i.log")"
"$SLUICE" inspect --json "$work/model.h5" | grep -qF '"export":"model"' || fail "sluice inspect --json has no \"export\":\"model\""
"$SLUICE" inspect --json "$ck" | grep -qF '"export":null' || fail "sluice inspect --json of a full checkpoint has no \"export\":null"
[ "$(size "$work/model.h5")" -lt "$(size "$ck")" ] || fail "export $(size "$work/model.h5") bytes is not smaller than $(size "$ck")"
echo "sizes: checkpoint $(size "$ck") bytes, export $(size "$work/model.h5") bytes"

# --- 2. a directory means its latest checkpoint -------------------------------------------------------------
timeout 120 "$SLUICE" export "$work/a" "$work/model_dir.h5" >"$work/d.log" 2>&1 || fail "export of a directory: $(cat "$work/d.log")"
grep -qF "from $ck" "$work/d.log" || fail "the directory's latest checkpoint was not exported: $(cat "$work/d.log")"

# --- 3. no resume from an export ----------------------------------------------------------------------------
train --set steps=4 --resume "$work/model.h5" >"$work/r.log" 2>&1 && fail "a run resumed from an export"
grep -q "model-only export" "$work/r.log" || fail "resume refusal does not name the export: $(cat "$work/r.log")"

# --- 4. bad input -------------------------------------------------------------------------------------------
timeout 120 "$SLUICE" export "$work/none.h5" "$work/x.h5" >"$work/m.log" 2>&1 && fail "a missing checkpoint was exported"
grep -qF "$work/none.h5" "$work/m.log" || fail "missing input not named: $(cat "$work/m.log")"
cp "$ck" "$work/bad.h5"
address="$(h5ls -va "$work/bad.h5/model/layer_0000/weight" | sed -n 's/^ *Address: *\([0-9]*\)$/\1/p')"
python3 -c "import sys; f = open(sys.argv[1], 'r+b'); f.seek(int(sys.argv[2]) + 2); b = f.read(1); f.seek(-1, 1); f.write(bytes([b[0] ^ 0x10]))" \
  "$work/bad.h5" "$address"
timeout 120 "$SLUICE" export "$work/bad.h5" "$work/x.h5" >"$work/c.log" 2>&1 && fail "a corrupt checkpoint was exported"
grep -q "checksum mismatch" "$work/c.log" && grep -qF "$work/bad.h5" "$work/c.log" ||
  fail "corrupt input not named with its checksum: $(cat "$work/c.log")"
[ -e "$work/x.h5" ] && fail "a refused export left $work/x.h5"
timeout 120 "$SLUICE" export "$ck" "$ck" >"$work/s.log" 2>&1 && fail "an export over its own input was accepted"
grep -q "is the checkpoint being exported" "$work/s.log" || fail "export over the input not explained: $(cat "$work/s.log")"
h5dump -H "$ck" | grep -qF 'DATASET "exp_avg_sq"' || fail "the refused export damaged its input"

finish "sluice export"
