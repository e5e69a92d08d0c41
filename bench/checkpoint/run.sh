#!/bin/bash
# Checkpoint write/read throughput vs dd, same byte count, same disk, same run.
#
# Usage (from the repository root): bench/checkpoint/run.sh [DIR] [RANKS] [MIB_PER_RANK]
#   DIR defaults to a fresh directory under /tmp; RANKS 2; MIB_PER_RANK 512 (2 x 512 MiB = 1 GiB).
# Fairness: dd writes with conv=fdatasync, and save() fsyncs the file and its directory before returning. Page
# caches cannot be dropped here (no privilege in the container), so both READ columns are reads from cache; the
# write columns are the meaningful comparison.
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
total_mib=$((ranks * mib_per_rank))
bytes=$((total_mib * 1024 * 1024))

cd "$repo_root"
bazel build //bench/checkpoint:checkpoint_bench >/dev/null 2>&1 || bazel build //bench/checkpoint:checkpoint_bench
# bazel-bin is a shared symlink another build may have repointed; ask Bazel for this configuration's output.
bench_binary="$(bazel info bazel-bin 2>/dev/null)/bench/checkpoint/checkpoint_bench"

seconds_of() {  # runs a command, prints its wall-clock seconds
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}

dd_file="$dir/dd_probe.bin"
dd_write_s=$(seconds_of dd if=/dev/zero of="$dd_file" bs=16M count=$((total_mib / 16)) conv=fdatasync)
dd_read_s=$(seconds_of dd if="$dd_file" of=/dev/null bs=16M)
rm -f "$dd_file"

declare -A write_s read_s
for transfer in independent collective; do
  line=$(tests/mpi_test_runner.sh "$ranks" "$bench_binary" --dir "$dir" --mib-per-rank "$mib_per_rank" \
           --transfer "$transfer" | grep '^RESULT')
  write_s[$transfer]=$(sed -E 's/.*write_s=([0-9.]+).*/\1/' <<<"$line")
  read_s[$transfer]=$(sed -E 's/.*read_s=([0-9.]+).*/\1/' <<<"$line")
done

mib_per_s() { echo "scale=0; $total_mib / $1" | bc -l; }
ratio() { echo "scale=2; $2 / $1" | bc -l; }  # dd time / our time = our throughput relative to dd

printf '%-32s %10s %10s %12s %12s %9s %9s\n' "method (${ranks} ranks, ${total_mib} MiB)" write_s read_s \
  write_MiB/s read_MiB/s write/dd read/dd
printf '%-32s %10.3f %10.3f %12s %12s %9s %9s\n' "dd (conv=fdatasync)" "$dd_write_s" "$dd_read_s" \
  "$(mib_per_s "$dd_write_s")" "$(mib_per_s "$dd_read_s")" 1.00 1.00
for transfer in independent collective; do
  printf '%-32s %10.3f %10.3f %12s %12s %9s %9s\n' "sluice save/read ($transfer)" "${write_s[$transfer]}" \
    "${read_s[$transfer]}" "$(mib_per_s "${write_s[$transfer]}")" "$(mib_per_s "${read_s[$transfer]}")" \
    "$(ratio "${write_s[$transfer]}" "$dd_write_s")" "$(ratio "${read_s[$transfer]}" "$dd_read_s")"
done
exit 0
