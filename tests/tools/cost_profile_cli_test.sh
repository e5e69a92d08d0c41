#!/bin/bash
# Measured costs end to end (4 ranks, the example MLP): `sluice train --profile FILE` writes a cost profile,
# `sluice plan --costs FILE` simulates with it (and `pipeline.schedule: auto` chooses with it), and a run whose
# config names it (pipeline.costs) lowers with those costs and trains to the same bits as one that does not.
# Usage: cost_profile_cli_test.sh SLUICE CONFIG
set -u
SLUICE="$1"
CONFIG="$2"
source "$(dirname "$0")/cli_test_env.sh"
mpi=(timeout 120 mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -np 4)
profile="$work/profile.txt"

out="$("${mpi[@]}" "$SLUICE" train "$CONFIG" --set steps=2 --set pipeline.schedule=zb-h1 --profile "$profile" 2>&1)"
[ $? -eq 0 ] || fail "profiling run: $out"
for key in sluice_cost_profile forward_seconds_per_sample backward_input_seconds_per_sample \
           backward_weight_seconds_per_sample forward_seconds_per_microbatch backward_input_seconds_per_microbatch \
           backward_weight_seconds_per_microbatch message_seconds message_latency_seconds message_seconds_per_row \
           microbatch_rows; do
  grep -q "^$key " "$profile" || fail "profile lacks $key: $(cat "$profile")"
done
grep -q "^sluice_cost_profile 2$" "$profile" || fail "profile version: $(cat "$profile")"
grep -q "^microbatch_rows 8$" "$profile" || fail "64 rows / 8 micro-batches: $(cat "$profile")"
# The second size: 64 micro-batches of one row (an eighth of the rows), fitted with the first as a + b x rows.
grep -q "^fit_rows 8 1$" "$profile" || fail "fit_rows: $(cat "$profile")"
grep -q "^measured_with zb-h1 stages 4 chunks 1$" "$profile" || fail "measured_with: $(cat "$profile")"

# plan --costs: F per action = (the micro-batch's fixed term + forward per sample x 8 rows) / 4 stages (as the plan
# prints it, 6 digits).
plan="$("$SLUICE" plan --schedule 1f1b --stages 4 --microbatches 8 --costs "$profile")" || fail "plan --costs"
python3 - "$plan" "$profile" <<'PY' || fail "plan --costs F: $(echo "$plan" | head -1)"
import re, sys
plan, path = sys.argv[1], sys.argv[2]
fields = dict(line.split(None, 1) for line in open(path) if line.strip())
expected = (float(fields["forward_seconds_per_microbatch"]) + float(fields["forward_seconds_per_sample"]) * 8) / 4
printed = float(re.search(r"\(F=(\S+) ", plan).group(1))
assert abs(printed - expected) <= 1e-5 * expected, (printed, expected)
PY
auto="$("$SLUICE" plan "$CONFIG" --set pipeline.schedule=auto --costs "$profile")" || fail "plan auto --costs"
grep -q "costs measured in $profile, time unit seconds" <<<"$auto" || fail "auto does not say it used the profile"

# Same bits with and without the costed lowering (interleaved: the costed placement differs the most).
loss() {
  "${mpi[@]}" "$SLUICE" train "$CONFIG" --set steps=3 --set pipeline.schedule=interleaved --set pipeline.chunks=2 \
    --json "$@" 2>/dev/null | grep '"summary"' | grep -o '"final_loss": [0-9.e+-]*'
}
plain="$(loss)"
costed="$(loss --set pipeline.costs="$profile")"
[ -n "$plain" ] && [ "$plain" = "$costed" ] || fail "final loss differs with pipeline.costs: '$plain' vs '$costed'"
out="$("${mpi[@]}" "$SLUICE" train "$CONFIG" --set steps=1 --set pipeline.costs="$work/missing.txt" 2>&1)"
[ $? -ne 0 ] && grep -q "cannot open cost profile '$work/missing.txt'" <<<"$out" || fail "missing profile: $out"

finish "cost profile"
