#!/bin/bash
# Two Sluice binaries on one operators config, alternated round by round (odd rounds A first, even rounds B first),
# for a before/after of a kernel change where PyTorch is not needed: per run the median step_ms after the warm-up,
# per round B / A, and the median of those ratios. Runs as side_by_side.sh runs its Sluice side (2 ranks bound to
# cores for vit, 1 process otherwise).
#
# Usage (from anywhere):
#   [setsid] bench/operators/ab_sluice.sh A_BINARY B_BINARY [--model vit|fno] [--rounds R] [--steps S]
#                                         [--warmup W] [--nice N]
set -euo pipefail

[ $# -ge 2 ] || { echo "ab_sluice.sh: give the two sluice binaries first (see the comment at the top of $0)" >&2; exit 2; }
binary_a="$1" binary_b="$2"
shift 2
model=vit rounds=3 steps=5 warmup=2 nice_level=0
while [ $# -gt 0 ]; do
  case "$1" in
    --model) model="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --nice) nice_level="$2"; shift 2 ;;
    *) echo "ab_sluice.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
for binary in "$binary_a" "$binary_b"; do
  [ -x "$binary" ] || { echo "ab_sluice.sh: '$binary' is not an executable file" >&2; exit 2; }
done
case "$model" in vit) np=2 bind=core ;; fno) np=1 bind=none ;;
  *) echo "ab_sluice.sh: --model is vit or fno, not '$model'" >&2; exit 2 ;; esac
for number in "$rounds" "$steps" "$warmup"; do
  [[ "$number" =~ ^[0-9]+$ ]] || { echo "ab_sluice.sh: '$number' is not a non-negative whole number" >&2; exit 2; }
done
[[ "$nice_level" =~ ^-?[0-9]+$ ]] || { echo "ab_sluice.sh: --nice '$nice_level' is not a whole number" >&2; exit 2; }
[ "$rounds" -ge 1 ] && [ "$steps" -ge 1 ] || { echo "ab_sluice.sh: --rounds and --steps must be at least 1" >&2; exit 2; }

cd "$(dirname "$0")/../.."
if [ "$nice_level" != 0 ] && [ "$(ps -o sid= $$ | tr -d ' ')" = "$$" ]; then
  echo "$nice_level" >/proc/self/autogroup 2>/dev/null || true  # our session's autogroup, as side_by_side.sh
fi

# median_step BINARY: one run's median step_ms after the warm-up.
median_step() {
  local private_tmp output status=0
  private_tmp="$(mktemp -d /tmp/ab_sluice.XXXXXX)"
  output="$(TMPDIR="$private_tmp" OMPI_MCA_orte_tmpdir_base="$private_tmp" \
    OMPI_MCA_btl_vader_backing_directory="$private_tmp" nice -n "$nice_level" \
    mpirun --allow-run-as-root -np "$np" --bind-to "$bind" --mca btl self,vader \
    "$1" train "bench/operators/$model.yaml" --set steps=$((warmup + steps)) 2>&1)" || status=$?
  rm -rf "$private_tmp"
  [ "$status" = 0 ] || { echo "$output" >&2; return 1; }
  awk -v w="$warmup" '$1 == "step" { for (i = 1; i < NF; ++i) if ($i == "step_ms" && $2 > w) print $(i + 1) }' \
    <<<"$output" | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) exit 1;
                                   print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

echo "command: bench/operators/ab_sluice.sh $binary_a $binary_b --model $model --rounds $rounds --steps $steps --warmup $warmup --nice $nice_level"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
ratios=()
for round in $(seq 1 "$rounds"); do
  if [ $((round % 2)) = 1 ]; then a="$(median_step "$binary_a")"; b="$(median_step "$binary_b")"
  else b="$(median_step "$binary_b")"; a="$(median_step "$binary_a")"; fi
  ratio="$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b / a }')"
  ratios+=("$ratio")
  echo "round $round: A $a ms, B $b ms, B / A $ratio, load average $(cut -d' ' -f1-3 /proc/loadavg)"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "median B / A over $rounds rounds: $(printf '%s\n' "${ratios[@]}" | sort -g |
  awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }')"
