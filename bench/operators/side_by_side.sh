#!/bin/bash
# Sluice against PyTorch on issue 29's CPU benchmarks, alternated round by round (odd rounds Sluice first, even rounds
# PyTorch first):
#   vit   8 transformer blocks (dim 256, 4 heads, 256 tokens, batch 32, M = 8) on 2 ranks x 1 thread, 4 blocks per
#         stage, 1F1B: `mpirun -np 2 --bind-to core sluice train bench/operators/vit.yaml` against
#         torch.distributed.pipelining (bench/operators/torch_vit.py: gloo, 2 processes, 1 thread each, pinned);
#   fno   FNO (4 blocks, 32 channels, 12 x 12 modes, 64 x 64, batch 32) in one process with 1 and with 2 threads:
#         `sluice train bench/operators/fno.yaml --set cpu_threads=T` against PyTorch eager
#         (bench/operators/torch_fno.py --threads T).
# Per row: each run's median step (Sluice: the step_ms lines of `sluice train` after the warm-up steps), the ratio
# Sluice / PyTorch per round and its median, and the highest peak RSS per rank over the rounds (Sluice: GNU time's
# %M around each rank; PyTorch: getrusage in each process). Both sides print their parameter counts first.
#
# Usage (from anywhere):
#   [setsid] bench/operators/side_by_side.sh [--model vit|fno|both] [--rounds R] [--steps S] [--warmup W]
#                                            [--nice N] [--python PATH]
#   --nice N   run every benchmark process at nice N; when started under `setsid` (its own session), the session's
#              autogroup gets nice N too (plain nice does nothing against other sessions' autogroups)
#   OPENBLAS_CORETYPE=SKYLAKEX (in the environment) picks OpenBLAS's kernels where it does not recognise the CPU
#   SLUICE=path/to/sluice uses that binary (default: the -c opt build of //tools/sluice:sluice, built if missing)
# Absolute times on a shared machine are noisy: read the ratios of one run, and the load averages it prints.
set -euo pipefail

model=both
rounds=3
steps=5
warmup=2
nice_level=0
python="${TORCH_PYTHON:-python3}"
while [ $# -gt 0 ]; do
  case "$1" in
    --model) model="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --nice) nice_level="$2"; shift 2 ;;
    --python) python="$2"; shift 2 ;;
    *) echo "side_by_side.sh: unknown option '$1' (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done
case "$model" in vit|fno|both) ;; *) echo "side_by_side.sh: --model is vit, fno or both, not '$model'" >&2; exit 2 ;; esac
for number in "$rounds" "$steps" "$warmup"; do
  [[ "$number" =~ ^[0-9]+$ ]] || { echo "side_by_side.sh: '$number' is not a non-negative whole number" >&2; exit 2; }
done
[[ "$nice_level" =~ ^-?[0-9]+$ ]] || { echo "side_by_side.sh: --nice '$nice_level' is not a whole number" >&2; exit 2; }
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
niced=()
if [ "$nice_level" != 0 ]; then
  niced=(nice -n "$nice_level")
  # Our own session (setsid) has its own autogroup: give it the same priority, else it competes as one equal group.
  if [ "$(ps -o sid= $$ | tr -d ' ')" = "$$" ]; then echo "$nice_level" >/proc/self/autogroup 2>/dev/null || true; fi
fi

work="$(mktemp -d /tmp/operators_side_by_side.XXXXXX)"
trap 'rm -rf "$work"' EXIT
results="$work/results"   # lines "<side> <row> <round> <median ms>"
rss="$work/rss"           # lines "<side> <row> <rank> <kB>"
total=$((warmup + steps))

# run_sluice ROW NP BIND CONFIG ROUND [--set ...]: one `sluice train` run, its median step after the warm-up, RSS.
run_sluice() {
  local row="$1" np="$2" bind="$3" config="$4" round="$5" private_tmp output status=0
  shift 5
  private_tmp="$(mktemp -d "$work/mpi.XXXXXX")"
  output="$(TMPDIR="$private_tmp" OMPI_MCA_orte_tmpdir_base="$private_tmp" \
    OMPI_MCA_btl_vader_backing_directory="$private_tmp" \
    "${niced[@]}" mpirun --allow-run-as-root -np "$np" --bind-to "$bind" --mca btl self,vader \
    sh -c 'exec /usr/bin/time -f "rss rank $OMPI_COMM_WORLD_RANK maxrss_kb %M" "$0" "$@"' \
    "$SLUICE" train "$config" --set steps="$total" "$@" 2>&1)" || status=$?
  rm -rf "$private_tmp"
  [ "$status" = 0 ] || { echo "$output" >&2; return 1; }
  awk -v w="$warmup" '$1 == "step" { for (i = 1; i < NF; ++i) if ($i == "step_ms" && $2 > w) print $(i + 1) }' \
    <<<"$output" | sort -g | awk -v side=sluice -v row="$row" -v round="$round" \
    '{ v[NR] = $1 } END { if (NR == 0) exit 1; m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
                         print side, row, round, m }' >>"$results" ||
    { echo "$output" >&2; echo "side_by_side.sh: no step_ms lines from sluice train" >&2; return 1; }
  awk -v row="$row" '$1 == "rss" { print "sluice", row, $3, $5 }' <<<"$output" >>"$rss"
}

# run_torch ROW ROUND SCRIPT [ARGS]: gloo processes now and then abort at exit, so a failed run is tried once more.
run_torch() {
  local row="$1" round="$2" script="$3" output
  shift 3
  output="$("${niced[@]}" "$python" "$script" --steps "$steps" --warmup "$warmup" "$@" 2>&1)" ||
    { echo "side_by_side.sh: the PyTorch run failed, trying it once more" >&2
      output="$("${niced[@]}" "$python" "$script" --steps "$steps" --warmup "$warmup" "$@" 2>&1)"; } ||
    { echo "$output" >&2; return 1; }
  awk -v row="$row" -v round="$round" '$1 ~ /^torch_/ && $2 == "mode" { print "torch", row, round, $5 }' \
    <<<"$output" >>"$results"
  awk -v row="$row" '$1 == "rss" { print "torch", row, $3, $5 }' <<<"$output" >>"$rss"
}

sluice_side() {
  if [ "$model" != fno ]; then run_sluice vit 2 core bench/operators/vit.yaml "$1"; fi
  if [ "$model" != vit ]; then
    run_sluice fno1 1 none bench/operators/fno.yaml "$1" --set cpu_threads=1
    run_sluice fno2 1 none bench/operators/fno.yaml "$1" --set cpu_threads=2
  fi
}
torch_side() {
  if [ "$model" != fno ]; then run_torch vit "$1" bench/operators/torch_vit.py --threads 1; fi
  if [ "$model" != vit ]; then
    run_torch fno1 "$1" bench/operators/torch_fno.py --threads 1
    run_torch fno2 "$1" bench/operators/torch_fno.py --threads 2
  fi
}

echo "command: bench/operators/side_by_side.sh --model $model --rounds $rounds --steps $steps --warmup $warmup --nice $nice_level"
echo "sluice: $SLUICE ($(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!bench' || echo ', modified'))"
# Sluice's products that stay on OpenBLAS run on the kernels of the core OpenBLAS recognises (bench/README.md,
# "Machines"): OPENBLAS_CORETYPE in the environment overrides it for both sides.
echo "openblas core: $(python3 -c "import ctypes; l = ctypes.CDLL('libopenblas.so.0'); l.openblas_get_corename.restype = ctypes.c_char_p; print(l.openblas_get_corename().decode())" 2>/dev/null || echo unknown) (OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset})"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'); torch $("$python" -c 'import torch; print(torch.__version__)')"
# Parameter counts, so a reader can see both sides build the same model.
for config in vit fno; do
  [ "$model" = both ] || [ "$model" = "$config" ] || continue
  echo "$config parameters: Sluice $("$SLUICE" plan "bench/operators/$config.yaml" 2>&1 | awk '$1 == "total:" { print $2 }'), PyTorch $(
    "$python" "bench/operators/torch_$config.py" --count | awk '$2 == "parameters" { print $3 }')"
done
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
labels = {"vit": "ViT: 2 ranks x 1 thread, 1F1B (PyTorch pipelining)",
          "fno1": "FNO: 1 process x 1 thread (PyTorch eager)", "fno2": "FNO: 1 process x 2 threads (PyTorch eager)"}
print("| row | Sluice ms | PyTorch ms | Sluice / PyTorch (median of rounds) | per-round ratios | "
      "peak RSS MiB per rank, Sluice | PyTorch |")
print("|---|---:|---:|---:|---|---|---|")
for row, label in labels.items():
    s, t = times[("sluice", row)], times[("torch", row)]
    rounds = sorted(set(s) & set(t))
    if not rounds:
        continue
    ratios = [s[r] / t[r] for r in rounds]
    def mib(side):
        ranks = sorted(k[2] for k in rss if k[0] == side and k[1] == row)
        return " / ".join(f"{rss[(side, row, k)] / 1024:.0f}" for k in ranks)
    print(f"| {label} | {statistics.median(s.values()):.1f} | {statistics.median(t.values()):.1f} | "
          f"{statistics.median(ratios):.3f} | {' '.join(f'{x:.3f}' for x in ratios)} | {mib('sluice')} | {mib('torch')} |")
EOF
