#!/bin/bash
# cpu_threads under `sluice train` (default auto): ranks use the cores they own. Expected counts come from this
# machine's own numbers (getconf for the node's cores, nproc for this process's affinity mask) through the rule
# of core/runtime/cpu_threads.h: one unbound rank uses every core, two share them, a given count is taken as is,
# and a count above the rank's cores (its affinity mask) is refused naming the value, the key and the count.
# Usage: cpu_threads_test.sh SLUICE CONFIG
set -u
SLUICE="$1"
CONFIG="$2"
source "$(dirname "$0")/cli_test_env.sh"

node_cores="$(getconf _NPROCESSORS_ONLN)"
bound="$(nproc)"
expect() {  # expect RANKS: the auto rule
  if [ "$bound" -lt "$node_cores" ]; then echo "$bound"; else
    local share=$((node_cores / $1)); [ "$share" -lt 1 ] && share=1; echo "$share"; fi
}
mpi=(timeout 120 mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader)
common=(--set pipeline.stages=1 --set steps=1)

out="$("${mpi[@]}" -np 1 "$SLUICE" train "$CONFIG" "${common[@]}" 2>&1)"
grep -q "rank 0: .*, $(expect 1) kernel thread(s)" <<<"$out" || fail "1 rank: expected $(expect 1) threads: $out"

out="$("${mpi[@]}" -np 2 "$SLUICE" train "$CONFIG" "${common[@]}" 2>&1)"
for r in 0 1; do
  grep -q "rank $r: .*, $(expect 2) kernel thread(s)" <<<"$out" || fail "2 ranks: expected $(expect 2) threads: $out"
done

# 1: taken as is (auto would give every core to one unbound rank).
out="$("${mpi[@]}" -np 1 "$SLUICE" train "$CONFIG" "${common[@]}" --set cpu_threads=1 2>&1)"
grep -q "rank 0: .*, 1 kernel thread(s)" <<<"$out" || fail "cpu_threads=1: $out"

too_many=$((bound + 1))
out="$("${mpi[@]}" -np 1 "$SLUICE" train "$CONFIG" "${common[@]}" --set cpu_threads=$too_many 2>&1)"
status=$?
[ "$status" -ne 0 ] || fail "cpu_threads=$too_many on $bound core(s) was accepted: $out"
grep -q "cpu_threads $too_many is more than the $bound core(s) in this rank's affinity mask" <<<"$out" ||
  fail "cpu_threads=$too_many: no message naming the value and the cores: $out"

# OPENBLAS_NUM_THREADS=1 from the environment is what keep leaves in place
out="$("${mpi[@]}" -np 1 "$SLUICE" train "$CONFIG" "${common[@]}" --set cpu_threads=keep 2>&1)"
grep -q "rank 0: .*, 1 kernel thread(s)" <<<"$out" || fail "cpu_threads=keep: $out"
finish "cpu threads"
