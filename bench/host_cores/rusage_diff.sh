#!/usr/bin/env bash
# Host-cores benchmark (issue 28) measured without relying on when step lines reach the reader: each rank's CPU
# (user + sys) and wall time from /usr/bin/time, for a short and a long run of the same job; the difference of the
# two removes start-up and shut-down. Step time: rank 0's own step_ms, median past step 20 of the long run.
# Why not run.py alone: on some machines rank 0's step lines reach a pipe in bursts, so run.py's samples (taken
# when a line arrives) measured garbage there (a 3 ms "step" against the 20 ms the ranks printed).
#
#   bash bench/host_cores/rusage_diff.sh [SLUICE_BINARY] [ROUNDS] [PYTHON_WITH_TORCH]
# Needs Open MPI's mpirun and /usr/bin/time (Debian's `time` package); the gloo side only with a Python that has torch.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sluice=${1:-bazel-bin/tools/sluice/sluice}
rounds=${2:-3}
python=${3:-}
short=40
long=240
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run_sluice() {  # POLICY STEPS
  nice -n -19 mpirun --allow-run-as-root -np 2 --bind-to core --mca btl self,vader -x OPENBLAS_NUM_THREADS=1 \
    sh -c "exec /usr/bin/time -f '%U %S %e' -o $work/r\$OMPI_COMM_WORLD_RANK.t $sluice train $here/unbalanced.yaml \
      --set steps=$2 --set comm.wait=$1" > "$work/out" 2>&1
}

run_gloo() {  # STEPS
  for r in 0 1; do
    nice -n -19 /usr/bin/time -f '%U %S %e' -o "$work/r$r.t" "$python" "$here/torch_host_cores.py" --rank $r \
      --port 29611 --steps "$1" > "$work/out.$r" 2>&1 &
  done
  wait
  cp "$work/out.0" "$work/out"
}

cpu_and_wall() { awk '{print $1 + $2, $3}' "$1"; }

median_step_ms() {
  awk '/^step /{for (i = 1; i <= NF; i++) if ($i == "step_ms") v = $(i + 1); if ($2 > 20) print v}' "$work/out" |
    sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'
}

one_side() {  # SIDE: a comm.wait policy, or gloo
  local runs=()
  for steps in $short $long; do
    if [ "$1" = gloo ]; then run_gloo $steps; else run_sluice "$1" $steps; fi
    runs+=("$(cpu_and_wall "$work/r0.t") $(cpu_and_wall "$work/r1.t")")
  done
  python3 - "$1" "$(median_step_ms)" "${runs[@]}" <<'PY'
import sys
side, step_ms, a, b = sys.argv[1], sys.argv[2], list(map(float, sys.argv[3].split())), list(map(float, sys.argv[4].split()))
c0, w0, c1, w1 = (b[i] - a[i] for i in range(4))
print(f"{side:6s} step_ms {step_ms}  CPU-s per wall-s: rank0 {c0 / w0:.2f} rank1 {c1 / w1:.2f}")
PY
}

echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
sides="spin auto block"
[ -n "$python" ] && sides="$sides gloo"
for r in $(seq "$rounds"); do
  for side in $sides; do echo "round $r $(one_side $side)"; done
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
