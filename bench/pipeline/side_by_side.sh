#!/bin/bash
# Sluice against PyTorch's torch.distributed.pipelining on the same model, split, loss, optimizer and batch
# (issue 17): Sluice's pipeline_bench (MPI, 2 ranks, 1 BLAS thread each, bound to a core each) and
# torch_pipeline.py (gloo, 2 processes, torch.set_num_threads(1), each pinned to a core) run alternately, R rounds
# (odd rounds Sluice first, even rounds PyTorch first), each run timing every schedule round-robin. The table gives
# per schedule the median over rounds of each side's per-run median step, and Sluice / PyTorch.
#
# Usage (from anywhere):
#   bench/pipeline/side_by_side.sh [--rounds R] [--steps S] [--warmup W] [--schedules "gpipe 1f1b ..."]
#                                  [--load N] [--threads-row] [--python PATH] [--wait POLICY]
#   --load N       N busy processes (`yes > /dev/null`) run during the whole comparison, standing in for a
#                  simulation's solver on the same node; they are stopped at the end
#   --threads-row  also, each round: one process with 2 BLAS / intra-op threads running the whole model over the
#                  same M micro-batches (Sluice: pipeline_bench on 1 rank, cpu_threads 2, no binding; PyTorch:
#                  torch_pipeline.py --ranks 1 --threads 2), against the 2 ranks x 1 thread rows (issue 17 item 4)
#   --python PATH  the Python with PyTorch (default: $TORCH_PYTHON, else python3)
#   --wait POLICY  Sluice's comm.wait (default auto)
# Absolute times on a shared machine are noisy: read the ratios of one run, and the load averages it prints.
set -euo pipefail

rounds=10
steps=10
warmup=3
schedules="gpipe 1f1b interleaved zb-v"
load=0
threads_row=0
python="${TORCH_PYTHON:-python3}"
wait_policy=auto
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --schedules) schedules="$2"; shift 2 ;;
    --load) load="$2"; shift 2 ;;
    --threads-row) threads_row=1; shift ;;
    --python) python="$2"; shift 2 ;;
    --wait) wait_policy="$2"; shift 2 ;;
    *) echo "side_by_side.sh: unknown option '$1' (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done
for number in "$rounds" "$steps" "$warmup" "$load"; do
  [[ "$number" =~ ^[0-9]+$ ]] || { echo "side_by_side.sh: '$number' is not a non-negative whole number" >&2; exit 2; }
done
[ "$rounds" -ge 1 ] && [ "$steps" -ge 1 ] || { echo "side_by_side.sh: --rounds and --steps must be at least 1" >&2; exit 2; }
"$python" -c "import torch.distributed.pipelining" 2>/dev/null ||
  { echo "side_by_side.sh: $python cannot import torch.distributed.pipelining (give --python PATH)" >&2; exit 2; }

repo_root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$repo_root"
source bench/pipeline/launch.sh
build_pipeline_bench

results="$(mktemp /tmp/side_by_side.XXXXXX)"
load_pids=()
cleanup() {
  for pid in "${load_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -f "$results"
}
trap cleanup EXIT
for _ in $(seq 1 "$load"); do
  yes >/dev/null &
  load_pids+=($!)
done

# Appends "<side> <row> <ms>" lines to $results from a run's "schedule NAME median_ms X" lines.
collect() {
  local side="$1" suffix="$2" output="$3"
  awk -v side="$side" -v suffix="$suffix" '$1 == "schedule" && $3 == "median_ms" { print side, $2 suffix, $4 }' \
    <<<"$output" >>"$results"
}
run_sluice() {
  local output
  # shellcheck disable=SC2086
  output="$(launch_pipeline_bench 2 1 core --optimizer adamw --wait "$wait_policy" --schedules $schedules \
    --steps "$steps" --warmup "$warmup")" || { echo "$output" >&2; return 1; }
  collect sluice "" "$output"
  if [ "$threads_row" = 1 ]; then
    output="$(launch_pipeline_bench 1 2 none --optimizer adamw --wait "$wait_policy" --cpu-threads 2 \
      --schedules 1f1b --steps "$steps" --warmup "$warmup")" || { echo "$output" >&2; return 1; }
    collect sluice "@1x2" "$(grep '^schedule 1f1b' <<<"$output")"
  fi
}
# PyTorch's gloo processes now and then abort at exit ("terminate called without an active exception"): such a run
# is tried once more rather than ending the whole comparison.
torch_twice() {
  local output
  output="$("$python" bench/pipeline/torch_pipeline.py "$@" 2>&1)" && { echo "$output"; return 0; }
  echo "side_by_side.sh: the PyTorch run failed, trying it once more" >&2
  output="$("$python" bench/pipeline/torch_pipeline.py "$@" 2>&1)" || { echo "$output" >&2; return 1; }
  echo "$output"
}
run_torch() {
  local output
  # shellcheck disable=SC2086
  output="$(torch_twice --schedules $schedules --steps "$steps" --warmup "$warmup")" || return 1
  collect torch "" "$output"
  if [ "$threads_row" = 1 ]; then
    output="$(torch_twice --ranks 1 --threads 2 --steps "$steps" --warmup "$warmup")" || return 1
    collect torch "@1x2" "$(sed 's/^schedule single-process-2t /schedule 1f1b /' <<<"$output")"
  fi
}

echo "command: bench/pipeline/side_by_side.sh --rounds $rounds --steps $steps --warmup $warmup --schedules \"$schedules\"" \
  "--load $load$([ "$threads_row" = 1 ] && echo ' --threads-row') --wait $wait_policy"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'); torch $("$python" -c 'import torch; print(torch.__version__)')"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq 1 "$rounds"); do
  if [ $((round % 2)) = 1 ]; then run_sluice; run_torch; else run_torch; run_sluice; fi
  echo "round $round done, load average $(cut -d' ' -f1-3 /proc/loadavg)"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
"$python" - "$results" "$schedules" "$threads_row" <<'EOF'
import statistics, sys
from collections import defaultdict
path, schedules, threads_row = sys.argv[1], sys.argv[2].split(), sys.argv[3] == "1"
times = defaultdict(list)  # (side, row) -> per-round medians, in round order
for line in open(path):
    side, row, ms = line.split()
    times[(side, row)].append(float(ms))
rows = [(s, s) for s in schedules]
if threads_row:
    rows.append(("1 rank x 2 threads (M micro-batches)", "1f1b@1x2"))
print("| schedule | Sluice ms | PyTorch ms | Sluice / PyTorch | per-round ratio min-max | rounds |")
print("|---|---:|---:|---:|---|---:|")
for label, key in rows:
    sluice, torch = times[("sluice", key)], times[("torch", key)]
    if not sluice or not torch:
        print(f"| {label} | missing | missing | | | 0 |")
        continue
    ratios = [a / b for a, b in zip(sluice, torch)]
    s, t = statistics.median(sluice), statistics.median(torch)
    print(f"| {label} | {s:.1f} | {t:.1f} | {s / t:.3f} | {min(ratios):.3f}-{max(ratios):.3f} | {len(ratios)} |")
if threads_row:
    for side, name in (("sluice", "Sluice"), ("torch", "PyTorch")):
        one, two = times[(side, "1f1b@1x2")], times[(side, "1f1b")]
        if one and two:
            print(f"\n{name}: 1 rank x 2 threads / 2 ranks x 1 thread (1f1b) = "
                  f"{statistics.median(one) / statistics.median(two):.3f}", end="")
    print()
seq = times[("sluice", "sequential")]
if seq:
    print(f"\nSluice single-process M-micro-batch step (1 thread, rank 0 alone): {statistics.median(seq):.1f} ms")
EOF
