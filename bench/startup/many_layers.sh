#!/usr/bin/env bash
# Start-up time with a huge layer count (issue 14, item 10): writes a config of LAYERS `linear 8` layers, then
# times `sluice plan` and a 1-step `sluice train` on 1 and 4 ranks (wall and user CPU, all ranks together).
# Usage: bench/startup/many_layers.sh [SLUICE [LAYERS]]   (defaults: bazel-bin/tools/sluice/sluice, 40000)
set -euo pipefail
sluice="${1:-bazel-bin/tools/sluice/sluice}"
layers="${2:-40000}"
work="$(mktemp -d /tmp/sluice-startup.XXXXXX)"
trap 'rm -rf "$work"' EXIT
{
  printf 'model:\n  inputs: 8\n  layers:\n'
  for _ in $(seq "$layers"); do echo '    - {type: linear, outputs: 8}'; done
  printf 'pipeline: {stages: 4, schedule: 1f1b, chunks: 1, microbatches: 4}\nloss: mse\n'
  printf 'optimizer: {type: sgd, lr: 1.0e-3}\ndata: {type: synthetic, batch: 16}\nseed: 1\nsteps: 1\n'
} > "$work/many.yaml"
export OPENBLAS_NUM_THREADS=1 TMPDIR="$work" OMPI_MCA_orte_tmpdir_base="$work" OMPI_MCA_btl_vader_backing_directory="$work"
root_flag=()
[ "$(id -u)" -eq 0 ] && root_flag=(--allow-run-as-root)
/usr/bin/time -f "plan ($layers layers, 4 stages): %e s wall, %U s user" "$sluice" plan "$work/many.yaml" > /dev/null
for ranks in 1 4; do
  /usr/bin/time -o "$work/time" -f "train 1 step, $ranks rank(s): %e s wall, %U s user (all ranks)" \
    mpirun "${root_flag[@]}" --oversubscribe -np "$ranks" "$sluice" train "$work/many.yaml" \
    --set pipeline.stages="$ranks" > /dev/null
  cat "$work/time"
done
