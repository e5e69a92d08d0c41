#!/bin/bash
# Checkpoint write/read throughput vs dd, same byte count, same disk, same run.
#
# Usage (from the repository root): bench/checkpoint/run.sh [DIR] [RANKS] [MIB_PER_RANK] [ROUNDS] [BASELINE]
#   DIR defaults to a fresh directory under /tmp; RANKS 2; MIB_PER_RANK 512 (2 x 512 MiB = 1 GiB); ROUNDS 3.
#   BASELINE: another build's checkpoint_bench (e.g. copied from a checkout of main), measured in the same rounds,
#   alternating with this one, as "baseline".
# Fairness: dd writes with conv=fdatasync, and save() fsyncs the file and its directory before returning. Caches
# cannot be dropped system-wide here, so after each write the written file's own (clean) pages are evicted with
# posix_fadvise(POSIX_FADV_DONTNEED) - dd's file by page_cache_tool, the checkpoint by the benchmark with the same
# code - and the cached fraction is printed before each read (0 = the read comes from the disk).
# The disk of a shared VM varies a lot from second to second, so dd and ours alternate for ROUNDS rounds and the
# summary compares medians.
set -euo pipefail

repo_root="$(cd "$(dirname "$0")/../.." && pwd)"
if [[ -n "${1:-}" ]]; then
  dir="$1"
else
  dir="$(mktemp -d /tmp/ckpt_bench.XXXXXX)"
  trap 'rm -rf "$dir"' EXIT  # also on failure
fi
ranks="${2:-2}"
mib_per_rank="${3:-512}"
rounds="${4:-3}"
baseline="${5:-}"
total_mib=$((ranks * mib_per_rank))
methods=(dd sluice)
if [[ -n "$baseline" ]]; then
  [[ -x "$baseline" ]] || { echo "$0: baseline '$baseline' is not an executable" >&2; exit 2; }
  baseline="$(cd "$(dirname "$baseline")" && pwd)/$(basename "$baseline")"
  methods+=(baseline)
fi

cd "$repo_root"
targets=(//bench/checkpoint:checkpoint_bench //bench/checkpoint:page_cache_tool)
bazel build "${targets[@]}" >/dev/null 2>&1 || bazel build "${targets[@]}"
# bazel-bin is a shared symlink another build may have repointed; ask Bazel for this configuration's output.
bin_dir="$(bazel info bazel-bin 2>/dev/null)/bench/checkpoint"

seconds_of() {  # runs a command, prints its wall-clock seconds
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}

declare -A write_s read_s resident
measure_dd() {  # round
  local file="$dir/dd_probe.bin"
  write_s[dd,$1]=$(seconds_of dd if=/dev/zero of="$file" bs=16M count=$((total_mib / 16)) conv=fdatasync)
  "$bin_dir/page_cache_tool" evict "$file"
  resident[dd,$1]=$("$bin_dir/page_cache_tool" resident "$file")
  read_s[dd,$1]=$(seconds_of dd if="$file" of=/dev/null bs=16M)
  rm -f "$file"
}
measure_sluice() {  # method round
  local line binary="$bin_dir/checkpoint_bench"
  [[ "$1" == baseline ]] && binary="$baseline"
  line=$(tests/mpi_test_runner.sh "$ranks" "$binary" --dir "$dir" --mib-per-rank "$mib_per_rank" | grep '^RESULT')
  write_s[$1,$2]=$(sed -E 's/.*write_s=([0-9.]+).*/\1/' <<<"$line")
  read_s[$1,$2]=$(sed -E 's/.*read_s=([0-9.]+).*/\1/' <<<"$line")
  resident[$1,$2]=$(sed -E 's/.*resident_before_read=([0-9.]+).*/\1/' <<<"$line")
}

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
mib_per_s() { echo "scale=0; $total_mib / $1" | bc -l; }
ratio() { echo "scale=2; $2 / $1" | bc -l; }  # dd time / our time = our throughput relative to dd
label() {
  case "$1" in
    dd) echo "dd (conv=fdatasync)" ;;
    sluice) echo "sluice save/read" ;;
    *) echo "sluice save/read ($1)" ;;
  esac
}

header() {
  printf '%-32s %9s %9s %11s %11s %8s %8s %9s\n' "$1" write_s read_s write_MiB/s read_MiB/s write/dd read/dd \
    cached
}
row() {  # name write read dd_write dd_read cached
  printf '%-32s %9.3f %9.3f %11s %11s %8s %8s %9s\n' "$1" "$2" "$3" "$(mib_per_s "$2")" "$(mib_per_s "$3")" \
    "$(ratio "$2" "$4")" "$(ratio "$3" "$5")" "$6"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((round = 1; round <= rounds; ++round)); do
  measure_dd "$round"
  # Alternate which build goes first, so neither always meets the disk right after dd.
  if ((round % 2)) || [[ -z "$baseline" ]]; then order=(sluice ${baseline:+baseline}); else order=(baseline sluice); fi
  for method in "${order[@]}"; do measure_sluice "$method" "$round"; done
  header "round $round (${ranks} ranks, ${total_mib} MiB)"
  for method in "${methods[@]}"; do
    row "$(label "$method")" "${write_s[$method,$round]}" "${read_s[$method,$round]}" "${write_s[dd,$round]}" \
      "${read_s[dd,$round]}" "${resident[$method,$round]}"
  done
done

declare -A median_write median_read
for method in "${methods[@]}"; do
  writes=() reads=()
  for ((round = 1; round <= rounds; ++round)); do
    writes+=("${write_s[$method,$round]}")
    reads+=("${read_s[$method,$round]}")
  done
  median_write[$method]=$(median "${writes[@]}")
  median_read[$method]=$(median "${reads[@]}")
done
header "median of $rounds rounds"
for method in "${methods[@]}"; do
  row "$(label "$method")" "${median_write[$method]}" "${median_read[$method]}" "${median_write[dd]}" \
    "${median_read[dd]}" "-"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit 0
