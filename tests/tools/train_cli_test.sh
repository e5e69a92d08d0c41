#!/bin/bash
# `sluice train` end to end under mpirun: per-step output and the JSON summary, --set overrides, HDF5 data,
# the measured timeline, and the error paths (bad config, world size, shapes), which must fail on every rank
# with a message naming the problem — and never hang (each run has a time limit).
# Usage: train_cli_test.sh SLUICE MAKE_HDF5_DATA CONFIG
set -u
SLUICE="$1"
MAKE_HDF5="$2"
CONFIG="$3"
source "$(dirname "$0")/cli_test_env.sh"

# mpirun NP ARGS... with a time limit; output in $out, exit status in $code.
run() {
  local np="$1"
  shift
  out="$(timeout 120 mpirun --allow-run-as-root --oversubscribe -np "$np" --mca btl self,vader "$SLUICE" train "$@" 2>&1)"
  code=$?
}

# --- a 4-rank run with --json: stdout holds only JSON objects, one per line ----------------------------
json_out="$(timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 --mca btl self,vader "$SLUICE" train "$CONFIG" \
  --json --set steps=4 --trace "$work/trace.json" 2>"$work/json.err")"
code=$?
[ "$code" -eq 0 ] || fail "json run exited $code: $json_out $(cat "$work/json.err")"
python3 - "$json_out" <<'PY' || fail "json output: $json_out"
import json, re, sys
text = sys.argv[1]
lines = [json.loads(l) for l in text.splitlines()]  # every stdout line must be JSON
steps = [l for l in lines if not l.get("summary")]
summary = [l for l in lines if l.get("summary")]
assert [s["step"] for s in steps] == [1, 2, 3, 4], steps
# Losses are printed with 9 significant digits (%.9g: trailing zeros dropped, so some may show fewer).
counts = []
for raw in re.findall(r'"loss": ([^,}]+)', text):
    digits = raw.replace(".", "").replace("-", "").split("e")[0].lstrip("0")
    counts.append(len(digits))
    assert float(raw) > 0, raw
assert counts and max(counts) == 9 and all(c <= 9 for c in counts), counts
assert len(summary) == 1, summary
assert 0.0 <= summary[0]["bubble_fraction"] < 1.0
assert len(summary[0]["peak_stash_bytes"]) == 4 and all(b > 0 for b in summary[0]["peak_stash_bytes"])
PY
# The rank -> (stage, replica) map still reaches the user, on stderr.
grep -q "rank 3: replica 0, pipeline rank 3" "$work/json.err" || fail "layout not printed under --json: $(cat "$work/json.err")"
python3 - "$work/trace.json" <<'PY' || fail "trace file"
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
ranks = {e["pid"] for e in events if e.get("ph") == "X"}
assert ranks == {0, 1, 2, 3}, ranks
assert any(e["name"] == "3F0" for e in events)
PY

# --- readable output, --set overrides of schedule/chunks/recompute, and DP x PP --------------------------
run 4 "$CONFIG" --set steps=2 --set pipeline.schedule=zb-v --set pipeline.chunks=2 --set pipeline.recompute=full
[ "$code" -eq 0 ] || fail "zb-v run exited $code: $out"
echo "$out" | grep -q "schedule zb-v, 2 chunk(s)/rank" || fail "override not applied: $out"
echo "$out" | grep -qE "^step 2  loss [0-9.e+-]+  samples/s" || fail "no readable step line: $out"
run 4 "$CONFIG" --set steps=2 --set pipeline.stages=2
[ "$code" -eq 0 ] || fail "2x2 run exited $code: $out"
echo "$out" | grep -q "4 ranks = 2 data-parallel x 2 pipeline ranks" || fail "layout line missing: $out"
echo "$out" | grep -q "rank 3: replica 1, pipeline rank 1" || fail "rank map missing: $out"

# --- device per stage: the list form runs each stage on its entry; all cpu must train exactly like `device: cpu`
losses() { echo "$1" | grep -oE "^step [0-9]+  loss [^ ]+" ; }
run 4 "$CONFIG" --set steps=3 --set device=cpu
[ "$code" -eq 0 ] || fail "device: cpu run exited $code: $out"
uniform_losses="$(losses "$out")"
(cat "$CONFIG"; echo "device: [cpu, cpu, cpu, cpu]") > "$work/per_stage.yaml"
run 4 "$work/per_stage.yaml" --set steps=3
[ "$code" -eq 0 ] || fail "device list run exited $code: $out"
[ "$(echo "$uniform_losses" | wc -l)" -eq 3 ] || fail "expected 3 step lines: $uniform_losses"
[ "$(losses "$out")" = "$uniform_losses" ] ||
  fail "device list losses differ from device: cpu: $(losses "$out") vs $uniform_losses"
echo "$out" | grep -q "rank 3: .*device cpu, transport mpi" || fail "layout lacks rank 3's device and transport: $out"

# --- HDF5 data ------------------------------------------------------------------------------------------
"$MAKE_HDF5" "$work/data.h5" 256 32 8 || fail "could not make the HDF5 file"
run 4 "$CONFIG" --set steps=3 --set data.type=hdf5 --set data.path="$work/data.h5"
[ "$code" -eq 0 ] || fail "hdf5 run exited $code: $out"
echo "$out" | grep -q "^step 3" || fail "hdf5 run did not reach step 3: $out"

# --- errors: every rank exits non-zero, the message names the problem, nothing hangs --------------------
expect_error() {  # NP PATTERN ARGS...
  local np="$1" pattern="$2"
  shift 2
  run "$np" "$@"
  [ "$code" -ne 0 ] || fail "'$*' succeeded"
  [ "$code" -ne 124 ] || fail "'$*' hung"
  echo "$out" | grep -q -- "$pattern" || fail "'$*': message lacks '$pattern': $out"
}
expect_error 4 "pipeline.stages" "$CONFIG" --set pipeline.stages=four
expect_error 4 "optimizr" "$CONFIG" --set optimizr.lr=1
expect_error 3 "world has 3 ranks" "$CONFIG"
expect_error 4 "at least pipeline.microbatches = 8 rows" "$CONFIG" --set data.batch=6
# `data` is optional under the C API only: sluice train reads its samples from it.
printf 'model: {inputs: 4, layers: [{type: linear, outputs: 2}]}\n' > "$work/no_data.yaml"
expect_error 1 "missing the data section; sluice train reads its samples from it" "$work/no_data.yaml"
expect_error 4 "zb-v" "$CONFIG" --set pipeline.schedule=zb-v
expect_error 4 "inputs" "$CONFIG" --set data.type=hdf5 --set data.path="$work/data.h5" --set model.inputs=30
expect_error 4 "no-such-file" "$CONFIG" --set data.type=hdf5 --set data.path="$work/no-such-file.h5"
expect_error 4 "split" "$CONFIG" --set 'pipeline.split=[1,1,1]'
expect_error 4 "device (from --set device=\[cpu, cuda\]): expected one device per stage (4), got 2" "$CONFIG" \
  --set 'device=[cpu, cuda]'
# No GPU here (and no CUDA in the default build): the cuda stage's rank fails at start with the reason, every
# rank learns it through the failure agreement (rank 0 prints it once, naming rank 1), nothing hangs.
expect_error 4 "\(device 'cuda' is not available in this build\|no CUDA device\).*(on rank 1, during sluice_trainer_start)" \
  "$work/per_stage.yaml" --set device.1=cuda

finish "train CLI"
