#!/bin/bash
# Issue 15 item 4: `pipeline.schedule: auto` with measured costs against every fixed schedule, within one memory
# budget, on the pipeline benchmark's model (8 x [linear 1024 + gelu], MSE, SGD, global batch 256, 2 stages).
#   1. a zb-h1 run measures the costs (sluice train --profile);
#   2. `sluice plan --costs` lists every candidate's peak bytes; the fixed schedules are those with M = 8 and no
#      recompute that fit BUDGET, auto is the plan's choice under BUDGET;
#   3. all of them run round-robin (ROUNDS rounds of STEPS steps each) and the median step time is reported.
# Usage (repository root): [SLUICE=binary] bench/pipeline/auto_vs_fixed.sh [BUDGET_BYTES] [ROUNDS] [STEPS]
set -eu
budget="${1:-40000000}"
rounds="${2:-3}"
steps="${3:-6}"
if [ -z "${SLUICE:-}" ]; then  # SLUICE=path/to/sluice skips the build (e.g. a fastbuild binary already there)
  bazel build -c opt --jobs=2 //tools/sluice:sluice >/dev/null 2>&1
  SLUICE="$(bazel info -c opt bazel-bin 2>/dev/null)/tools/sluice/sluice"
fi
sluice="$SLUICE"
work="$(mktemp -d /tmp/sl-auto.XXXXXX)"
export OPENBLAS_NUM_THREADS=1 TMPDIR="$work" OMPI_MCA_orte_tmpdir_base="$work"
mpi=(mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader -np 2)
config="$work/bench.yaml"
{
  echo "model:"; echo "  inputs: 1024"; echo "  layers:"
  for _ in 1 2 3 4 5 6 7 8; do echo "    - {type: linear, outputs: 1024}"; echo "    - {type: gelu}"; done
  echo "pipeline: {stages: 2, schedule: 1f1b, chunks: 1, microbatches: 8, recompute: none}"
  echo "loss: mse"; echo "optimizer: {type: sgd, lr: 1.0e-4}"
  echo "data: {type: synthetic, batch: 256}"; echo "seed: 1"; echo "steps: 1"
} > "$config"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
# zb-h1 measures I and W apart (a fused B would give W = 0 and hide what zero-bubble schedules gain).
"${mpi[@]}" "$sluice" train "$config" --set steps=4 --set pipeline.schedule=zb-h1 --profile "$work/costs.txt" \
  >/dev/null </dev/null
cat "$work/costs.txt"
table="$("$sluice" plan "$config" --set pipeline.schedule=auto --set pipeline.memory_budget="$budget" \
         --costs "$work/costs.txt" | sed -n '/^pipeline.schedule auto/,/^(costs/p')"
echo "$table" | grep -- '-->' | sed 's/^/auto: /'
# name|v|M|recompute|simulated|peak per run: auto's choice, then the fixed M=8 no-recompute schedules that fit.
runs="$(echo "$table" | awk -v b="$budget" '
  $1 == "-->" { printf "auto(%s)|%s|%s|%s|%s|%s\n", $2, $3, $4, $5, $6, $7 }
  $1 != "-->" && $3 == 8 && $4 == "none" && $6 <= b { printf "%s|%s|%s|%s|%s|%s\n", $1, $2, $3, $4, $5, $6 }')"
declare -A times
for round in $(seq "$rounds"); do
  while IFS='|' read -r name v m rc sim peak; do
    schedule="${name#auto(}"; schedule="${schedule%)}"
    out="$("${mpi[@]}" "$sluice" train "$config" --set steps="$steps" --set pipeline.schedule="$schedule" \
           --set pipeline.chunks="$v" --set pipeline.microbatches="$m" --set pipeline.recompute="$rc" \
           --set pipeline.costs="$work/costs.txt" --json 2>/dev/null </dev/null | grep '"step"' | tail -n +2 |
           grep -o '"seconds": [0-9.e-]*' | cut -d' ' -f2 | tr '\n' ' ')"
    times[$name.$v]="${times[$name.$v]:-} $out"
  done <<<"$runs"
done
echo "| schedule | v | M | recompute | simulated step s | peak bytes/rank (plan) | measured step ms (median) |"
echo "|---|---:|---:|---|---:|---:|---:|"
while IFS='|' read -r name v m rc sim peak; do
  median="$(echo ${times[$name.$v]} | tr ' ' '\n' | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2) * 1000}')"
  echo "| $name | $v | $m | $rc | $sim | $peak | $median |"
done <<<"$runs"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -rf "$work"
