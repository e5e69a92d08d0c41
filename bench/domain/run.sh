#!/bin/bash
# Issue 32's domain bench: the U-Net of bench/domain/unet3d.yaml on 2 pipeline stages x 4 domain blocks (8 ranks)
# against the same model undecomposed (pipeline.domain [1, 1, 1]: the same tiled code on one block, 2 ranks).
#   (a) `sluice plan` of both: the split's blocks and halo bytes per layer (the paper numbers), the stash per stage;
#       pipeline.schedule auto with --budget BYTES: the planner's verdict on each (the refusal message is printed);
#   (b) 8 ranks, 2 stages x [2, 2, 1] blocks, `sluice train`, S and S+1 steps: peak RSS per rank (GNU time's %M
#       around each rank) and, from Open MPI's pml monitoring, the bytes each rank sent per step to each peer (the
#       difference of the two runs, so the start cancels): halo (same stage) and stage boundary, against the paper;
#   (c) the undecomposed run on 2 ranks, the same steps: its peak RSS per rank and bytes per step;
#   and a tiny-field run of the same binary on 2 ranks: the RSS every rank has whatever the field (libraries, code).
# Each rank's share = base + (undecomposed RSS of its stage - base) / 4, base = the tiny run's RSS of that stage.
# 8 ranks on this 2-core machine are oversubscribed: the script reports bytes and RSS, never time.
#
# Usage (from anywhere): bench/domain/run.sh [--field D1,D2,D3] [--tile T1,T2,T3] [--steps S] [--budget BYTES]
#                                            [--plan-only] [--keep DIR] [--mmap-threshold BYTES]
#   defaults: --field 128,128,32 --tile 64,64,32 --steps 1 --budget (none: only the plans' tables)
#   --mmap-threshold: the trained runs with glibc's malloc mmap threshold fixed at BYTES (GLIBC_TUNABLES), so
#   freed tensors above it go back to the system; by default glibc raises the threshold to each freed mmapped
#   chunk's size (up to 32 MiB), and block-sized tensors then live in the heap, which keeps its high-water mark
#   (bench/README.md "Domain blocks": most of a split rank's RSS above its share).
#   SLUICE=path/to/sluice uses that binary (default: the -c opt build of //tools/sluice:sluice, built if missing)
set -euo pipefail

field=128,128,32
tile=64,64,32
steps=1
budget=
plan_only=0
keep=
mmap_threshold=
while [ $# -gt 0 ]; do
  case "$1" in
    --field) field="$2"; shift 2 ;;
    --tile) tile="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --budget) budget="$2"; shift 2 ;;
    --plan-only) plan_only=1; shift ;;
    --keep) keep="$2"; shift 2 ;;
    --mmap-threshold) mmap_threshold="$2"; shift 2 ;;
    *) echo "run.sh: unknown option '$1' (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done
[[ "$field" =~ ^[0-9]+,[0-9]+,[0-9]+$ && "$tile" =~ ^[0-9]+,[0-9]+,[0-9]+$ ]] ||
  { echo "run.sh: --field and --tile take three whole numbers, e.g. 128,128,32" >&2; exit 2; }
[[ "$steps" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --steps must be a whole number >= 1" >&2; exit 2; }
[ -z "$mmap_threshold" ] || [[ "$mmap_threshold" =~ ^[0-9]+$ ]] ||
  { echo "run.sh: --mmap-threshold takes whole bytes, e.g. 1048576" >&2; exit 2; }
[ -z "$budget" ] || [[ "$budget" =~ ^[0-9.e+]+$ ]] || { echo "run.sh: --budget takes bytes, e.g. 2.0e9" >&2; exit 2; }

repo_root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$repo_root"
if [ -z "${SLUICE:-}" ]; then
  # bazel-bin follows the last build's mode: take the opt output explicitly.
  SLUICE="$(bazel info -c opt bazel-bin 2>/dev/null)/tools/sluice/sluice"
  [ -x "$SLUICE" ] || bazel build -c opt --jobs=2 //tools/sluice:sluice
fi
if [ -n "$keep" ]; then work="$keep"; mkdir -p "$work"; else
  work="$(mktemp -d /tmp/domain_bench.XXXXXX)"; trap 'rm -rf "$work"' EXIT
fi
config=bench/domain/unet3d.yaml
common=(--set "model.inputs=[2,$field]" --set "pipeline.domain_tile=[$tile]")
split=(--set "pipeline.domain=[2,2,1]")
whole=(--set "pipeline.domain=[1,1,1]")
[ -z "$mmap_threshold" ] || export GLIBC_TUNABLES="glibc.malloc.mmap_threshold=$mmap_threshold"
echo "domain bench: field [2,$field], tile [$tile], malloc mmap threshold ${mmap_threshold:-dynamic}, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(git rev-parse --short HEAD)"

# plan NAME OVERRIDES...: the text plan and its JSON twin into $work/plan_NAME.{txt,json}.
plan() {
  local name="$1"
  shift
  "$SLUICE" plan "$config" "${common[@]}" "$@" >"$work/plan_$name.txt"
  "$SLUICE" plan "$config" "${common[@]}" "$@" --format json >"$work/plan_$name.json"
}

# budget_verdict NAME OVERRIDES...: what pipeline.schedule auto with the budget says (a table, or the refusal).
budget_verdict() {
  local name="$1" status=0
  shift
  "$SLUICE" plan "$config" "${common[@]}" "$@" --set pipeline.schedule=auto --set "pipeline.memory_budget=$budget" \
    >"$work/budget_$name.txt" 2>&1 || status=$?
  echo "-- $name, pipeline.schedule auto, pipeline.memory_budget $budget: exit $status"
  grep -E "no schedule fits|pipeline.schedule auto:|-->" "$work/budget_$name.txt" | cut -c1-240 | head -4
}

echo "== (a) sluice plan"
plan split "${split[@]}"
plan whole "${whole[@]}"
sed -n '/^domain /,/^halo bytes per sample/p' "$work/plan_split.txt"
for name in split whole; do
  echo "-- $name: the plan's peak stash per rank (from the largest block's model)"
  grep -A2 "^rank  busy" "$work/plan_$name.txt"
done
if [ -n "$budget" ]; then
  budget_verdict whole "${whole[@]}"
  budget_verdict split "${split[@]}"
  # What a search that sized the stash by the block would see: one block's field as the whole input.
  IFS=, read -r d1 d2 d3 <<<"$field"
  budget_verdict one-block-field "${whole[@]}" --set "model.inputs=[2,$((d1 / 2)),$((d2 / 2)),$d3]" \
    --set "pipeline.domain_tile=[$((d1 / 2)),$((d2 / 2)),$d3]"
fi
[ "$plan_only" = 0 ] || exit 0

# train NAME NP STEPS OVERRIDES...: one `sluice train` run into $work/NAME.STEPS/ (output, monitoring files, RSS).
train() {
  local name="$1" np="$2" n="$3" dir private_tmp status=0
  shift 3
  dir="$work/$name.$n"
  mkdir -p "$dir"
  private_tmp="$(mktemp -d /tmp/domain_bench_mpi.XXXXXX)"
  # shellcheck disable=SC2016  # $RSS_DIR and $OMPI_COMM_WORLD_RANK are expanded by each rank's sh, not here
  RSS_DIR="$dir" TMPDIR="$private_tmp" OMPI_MCA_orte_tmpdir_base="$private_tmp" OMPI_MCA_btl_vader_backing_directory="$private_tmp" \
    mpirun --allow-run-as-root --oversubscribe -np "$np" --bind-to none --mca btl self,vader \
    --mca pml_monitoring_enable 2 --mca pml_monitoring_enable_output 3 --mca pml_monitoring_filename "$dir/prof" \
    sh -c 'exec /usr/bin/time -o "$RSS_DIR/rss.$OMPI_COMM_WORLD_RANK" -f "%M" "$0" "$@"' \
    "$SLUICE" train "$config" "${common[@]}" "$@" --set steps="$n" >"$dir/output.txt" 2>&1 || status=$?
  rm -rf "$private_tmp"
  [ "$status" = 0 ] || { tail -30 "$dir/output.txt" >&2; echo "run.sh: $name ($np ranks, $n steps) failed" >&2; return 1; }
  # One file per rank: the ranks' lines on a shared stdout interleave mid-line.
  for ((r = 0; r < np; ++r)); do echo "$r $(cat "$dir/rss.$r")"; done >"$dir/rss"
}

# rss_table: peak RSS per rank, MiB, and each split rank's share of the undecomposed run.
rss_table() {
  local long=$((steps + 1))
  echo "rank stage block | split RSS MiB | undecomposed RSS MiB (its stage) | tiny-field RSS MiB | share MiB | split / share"
  awk -v blocks=4 '
    FILENAME ~ /whole/ { whole[$1] = $2 / 1024; next }
    FILENAME ~ /tiny/ { tiny[$1] = $2 / 1024; next }
    { split_rss[$1] = $2 / 1024 }
    END { for (r = 0; r < 8; ++r) { s = int(r / blocks); share = tiny[s] + (whole[s] - tiny[s]) / blocks;
            printf "%4d %5d %5d | %13.0f | %32.0f | %18.0f | %9.0f | %.2f\n", r, s, r % blocks, split_rss[r],
                   whole[s], tiny[s], share, split_rss[r] / share } }' \
    "$work/whole.$long/rss" "$work/tiny.1/rss" "$work/split.$long/rss"
}

echo "== (b) 8 ranks, 2 stages x [2, 2, 1] blocks; (c) 2 ranks undecomposed; $steps and $((steps + 1)) steps"
train tiny 2 1 "${whole[@]}" --set "model.inputs=[2,16,16,8]" --set "pipeline.domain_tile=[16,16,8]"
for n in "$steps" $((steps + 1)); do
  train split 8 "$n" "${split[@]}"
  train whole 2 "$n" "${whole[@]}"
done
grep -E "^step " "$work/split.$((steps + 1))/output.txt" | head -4 || true
echo "-- peak RSS per rank (the $((steps + 1))-step runs)"
rss_table
for name in split whole; do
  blocks=4; np=8
  [ "$name" = split ] || { blocks=1; np=2; }
  echo "-- $name: bytes per step (monitoring of the $((steps + 1))-step run minus the $steps-step run)"
  python3 bench/domain/link_bytes.py --short "$work/$name.$steps/prof" --long "$work/$name.$((steps + 1))/prof" \
    --ranks "$np" --blocks "$blocks" --plan "$work/plan_split.json" --split 12,5 --skips 1 --rows 2 \
    --config "$config" --field "$field" --domain 2,2,1
done
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
