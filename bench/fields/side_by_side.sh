#!/bin/bash
# Sluice against PyTorch on issue 27's CPU U-Net (bench/fields/unet.yaml, bench/fields/torch_unet.py), alternated
# round by round (odd rounds Sluice first, even rounds PyTorch first):
#   (a) pipelined, 2 ranks x 1 thread, 1F1B: `mpirun -np 2 --bind-to core sluice train unet.yaml` against
#       torch.distributed.pipelining (gloo, 2 processes, 1 thread each, pinned to a core each);
#   (b) one process, 2 threads: unet.yaml with pipeline.stages 1 (no split) and cpu_threads 2 against PyTorch eager
#       with torch.set_num_threads(2); both over the same 8 micro-batches.
# Per row: each run's median step (Sluice: the step_ms lines of `sluice train` after the warm-up steps), the ratio
# Sluice / PyTorch per round and its median, and the highest peak RSS per rank over the rounds (Sluice: GNU time's
# %M around each rank; PyTorch: getrusage in each process).
#
# Usage (from anywhere):  bench/fields/side_by_side.sh [--rounds R] [--steps S] [--warmup W] [--python PATH]
#   SLUICE=path/to/sluice uses that binary (default: the -c opt build of //tools/sluice:sluice, built if missing)
# Absolute times on a shared machine are noisy: read the ratios of one run, and the load averages it prints.
set -euo pipefail

rounds=3
steps=10
warmup=3
python="${TORCH_PYTHON:-python3}"
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --python) python="$2"; shift 2 ;;
    *) echo "side_by_side.sh: unknown option '$1' (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done
for number in "$rounds" "$steps" "$warmup"; do
  [[ "$number" =~ ^[0-9]+$ ]] || { echo "side_by_side.sh: '$number' is not a non-negative whole number" >&2; exit 2; }
done
[ "$rounds" -ge 1 ] && [ "$steps" -ge 1 ] || { echo "side_by_side.sh: --rounds and --steps must be at least 1" >&2; exit 2; }
"$python" -c "import torch.distributed.pipelining" 2>/dev/null ||
  { echo "side_by_side.sh: $python cannot import torch.distributed.pipelining (give --python PATH)" >&2; exit 2; }

repo_root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$repo_root"
if [ -z "${SLUICE:-}" ]; then
  # bazel-bin follows the last build's mode: take the opt output explicitly.
  SLUICE="$(bazel info -c opt bazel-bin 2>/dev/null)/tools/sluice/sluice"
  [ -x "$SLUICE" ] || bazel build -c opt --jobs=2 //tools/sluice:sluice
fi

work="$(mktemp -d /tmp/fields_side_by_side.XXXXXX)"
trap 'rm -rf "$work"' EXIT
results="$work/results"   # lines "<side> <row> <round> <median ms>"
rss="$work/rss"           # lines "<side> <row> <rank> <kB>"
pipelined_yaml="bench/fields/unet.yaml"
single_yaml="$work/unet_1x2.yaml"
sed -e 's/stages: 2,/stages: 1,/' -e 's/, split: \[12, 5\]//' -e 's/^cpu_threads: auto/cpu_threads: 2/' \
  "$pipelined_yaml" >"$single_yaml"
grep -q 'stages: 1,' "$single_yaml" && grep -q '^cpu_threads: 2' "$single_yaml" && ! grep -q 'split:' "$single_yaml" ||
  { echo "side_by_side.sh: could not derive the one-process config from $pipelined_yaml" >&2; exit 1; }
total=$((warmup + steps))

# run_sluice ROW NP BIND CONFIG ROUND: one `sluice train` run, its median step after the warm-up, RSS per rank.
run_sluice() {
  local row="$1" np="$2" bind="$3" config="$4" round="$5" private_tmp output status=0
  private_tmp="$(mktemp -d "$work/mpi.XXXXXX")"
  output="$(TMPDIR="$private_tmp" OMPI_MCA_orte_tmpdir_base="$private_tmp" \
    OMPI_MCA_btl_vader_backing_directory="$private_tmp" \
    mpirun --allow-run-as-root -np "$np" --bind-to "$bind" --mca btl self,vader \
    sh -c 'exec /usr/bin/time -f "rss rank $OMPI_COMM_WORLD_RANK maxrss_kb %M" "$0" "$@"' \
    "$SLUICE" train "$config" --set steps="$total" 2>&1)" || status=$?
  rm -rf "$private_tmp"
  [ "$status" = 0 ] || { echo "$output" >&2; return 1; }
  awk -v w="$warmup" '$1 == "step" { for (i = 1; i < NF; ++i) if ($i == "step_ms" && $2 > w) print $(i + 1) }' \
    <<<"$output" | sort -g | awk -v side=sluice -v row="$row" -v round="$round" \
    '{ v[NR] = $1 } END { if (NR == 0) exit 1; m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
                         print side, row, round, m }' >>"$results" ||
    { echo "$output" >&2; echo "side_by_side.sh: no step_ms lines from sluice train" >&2; return 1; }
  awk -v row="$row" '$1 == "rss" { print "sluice", row, $3, $5 }' <<<"$output" >>"$rss"
}

# gloo processes now and then abort at exit: such a run is tried once more.
run_torch() {
  local row="$1" round="$2" output
  shift 2
  output="$("$python" bench/fields/torch_unet.py --steps "$steps" --warmup "$warmup" "$@" 2>&1)" ||
    { echo "side_by_side.sh: the PyTorch run failed, trying it once more" >&2
      output="$("$python" bench/fields/torch_unet.py --steps "$steps" --warmup "$warmup" "$@" 2>&1)"; } ||
    { echo "$output" >&2; return 1; }
  awk -v row="$row" -v round="$round" '$1 == "torch_unet" { print "torch", row, round, $5 }' <<<"$output" >>"$results"
  awk -v row="$row" '$1 == "rss" { print "torch", row, $3, $5 }' <<<"$output" >>"$rss"
}

sluice_side() {
  run_sluice pipe 2 core "$pipelined_yaml" "$1"
  run_sluice single 1 none "$single_yaml" "$1"
}
torch_side() {
  run_torch pipe "$1" --ranks 2 --threads 1 --schedule 1f1b
  run_torch single "$1" --ranks 1 --threads 2
}

echo "command: bench/fields/side_by_side.sh --rounds $rounds --steps $steps --warmup $warmup"
echo "sluice: $SLUICE ($(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!bench' || echo ', modified'))"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'); torch $("$python" -c 'import torch; print(torch.__version__)')"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq 1 "$rounds"); do
  load_before="$(cut -d' ' -f1 /proc/loadavg)"
  if [ $((round % 2)) = 1 ]; then sluice_side "$round"; torch_side "$round"; else torch_side "$round"; sluice_side "$round"; fi
  echo "round $round done, load average $load_before -> $(cut -d' ' -f1-3 /proc/loadavg)"
  awk -v r="$round" '$3 == r { printf "  %s %s %.1f ms\n", $1, $2, $4 }' "$results"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
"$python" - "$results" "$rss" <<'EOF'
import statistics, sys
from collections import defaultdict
results, rss_path = sys.argv[1], sys.argv[2]
times = defaultdict(dict)  # (side, row) -> {round: ms}
for line in open(results):
    side, row, rnd, ms = line.split()
    times[(side, row)][int(rnd)] = float(ms)
rss = defaultdict(int)  # (side, row, rank) -> highest kB
for line in open(rss_path):
    side, row, rank, kb = line.split()
    rss[(side, row, int(rank))] = max(rss[(side, row, int(rank))], int(kb))
labels = {"pipe": "(a) 2 ranks x 1 thread, 1F1B", "single": "(b) 1 process x 2 threads (PyTorch eager)"}
print("| row | Sluice ms | PyTorch ms | Sluice / PyTorch (median of rounds) | per-round ratios | "
      "peak RSS MiB per rank, Sluice | PyTorch |")
print("|---|---:|---:|---:|---|---|---|")
for row, label in labels.items():
    s, t = times[("sluice", row)], times[("torch", row)]
    rounds = sorted(set(s) & set(t))
    if not rounds:
        print(f"| {label} | missing | missing | | | | |")
        continue
    ratios = [s[r] / t[r] for r in rounds]
    def mib(side):
        ranks = sorted(k[2] for k in rss if k[0] == side and k[1] == row)
        return " / ".join(f"{rss[(side, row, k)] / 1024:.0f}" for k in ranks)
    print(f"| {label} | {statistics.median(s.values()):.1f} | {statistics.median(t.values()):.1f} | "
          f"{statistics.median(ratios):.3f} | {' '.join(f'{x:.3f}' for x in ratios)} | {mib('sluice')} | {mib('torch')} |")
EOF
