#!/bin/bash
# Step time and CPU-seconds of `sluice train` per comm.wait policy, the policies alternated round by round so
# that load changes on the machine hit all of them alike. Usage (repository root, after building
# //tools/sluice:sluice): bench/waits/run.sh [ROUNDS] [NP] [STEPS]
set -u
ROUNDS="${1:-3}"
NP="${2:-4}"
STEPS="${3:-30}"
SLUICE=bazel-bin/tools/sluice/sluice
work="$(mktemp -d /tmp/sl-waits.XXXXXX)"
trap 'rm -rf "$work"' EXIT
export TMPDIR="$work" OMPI_MCA_orte_tmpdir_base="$work" OMPI_MCA_btl_vader_backing_directory="$work"
export OPENBLAS_NUM_THREADS=1
TIMEFORMAT='%U %S'
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores; $NP ranks; $STEPS steps"
echo "round policy seconds_per_step cpu_seconds_all_ranks"
for round in $(seq "$ROUNDS"); do
  for policy in spin yield block auto; do
    { time mpirun --allow-run-as-root --oversubscribe -np "$NP" --mca btl self,vader "$SLUICE" train \
        examples/configs/mlp.yaml --set steps="$STEPS" --set comm.wait="$policy" >"$work/out" 2>&1; } 2>"$work/time"
    seconds="$(sed -n 's/^done: [0-9]* steps in \([0-9.]*\) s.*/\1/p' "$work/out")"
    cpu="$(awk '{print $1 + $2}' "$work/time")"
    awk -v r="$round" -v p="$policy" -v s="$seconds" -v n="$STEPS" -v c="$cpu" \
      'BEGIN { printf "%d %s %.2f_ms %.2f\n", r, p, (s == "" ? -1 : 1000 * s / n), c }'
  done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
