#!/bin/bash
# Runs one fuzz target on its seed corpus.
#
# Usage: fuzz_test.sh FUZZ_BINARY SEED_FILE [LIBFUZZER_FLAGS...]   (the seed corpus is SEED_FILE's directory)
# Under --config=fuzz the binary is a libFuzzer one: it fuzzes for SLUICE_FUZZ_SECONDS (default 60; CI's value)
# starting from a writable copy of the seeds, and fails on any crash, hang (-timeout), sanitizer report or leak
# in our code. The input that did it is kept in the test's undeclared outputs (bazel-testlogs/.../test.outputs/)
# to commit as a reproducer. In every other configuration the binary replays the seeds once
# (fuzz_replay_main.cc) and ignores the flags.
#
# Crashes inside the HDF5 library itself: HDF5 1.10.8 (Debian 12) has known crashes on crafted files (e.g. a
# SEGV in H5A__close under H5Aiterate2, reproducer in tests/fuzz/hdf5_crashes/). They are not ours to fix and
# would fail CI at random, so an input whose report (crash, sanitizer, leak) reaches libhdf5 before any frame of
# our code is listed as an upstream HDF5 crash and fuzzing goes on with the remaining time (each restart reloads
# the corpus, so the run still ends at its deadline); anything else fails the test.
set -euo pipefail

if [[ $# -lt 2 || ! -x "$1" || ! -f "$2" ]]; then
  echo "usage: $0 FUZZ_BINARY SEED_FILE [LIBFUZZER_FLAGS...]  (an executable and one file of the seed corpus)" >&2
  exit 2
fi
binary="$1"
seeds="$(dirname "$2")"
shift 2
seconds="${SLUICE_FUZZ_SECONDS:-60}"
if [[ ! "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "$0: SLUICE_FUZZ_SECONDS must be a positive number of seconds, got '$seconds'" >&2
  exit 2
fi

scratch="${TEST_TMPDIR:-$(mktemp -d)}"
work="$scratch/corpus"
artifacts="${TEST_UNDECLARED_OUTPUTS_DIR:-$scratch}"
mkdir -p "$work" "$artifacts"
export TMPDIR="$scratch" OPENBLAS_NUM_THREADS=1
if [[ -z "${ASAN_SYMBOLIZER_PATH:-}" && -x /usr/lib/llvm-14/bin/llvm-symbolizer ]]; then
  export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
fi

# first_own_frame LOG: the first frame of the report's first stack that is in HDF5 or in our code (sanitizer
# interceptors such as memcpy/strdup, libc and libstdc++ frames come before either and are skipped).
first_own_frame() {
  grep -E '^ +#[0-9]+ ' "$1" | grep -E 'libhdf5|sluice::|LLVMFuzzerTestOneInput' | head -n 1 || true
}

deadline=$(($(date +%s) + seconds))
upstream=0
while :; do
  left=$((deadline - $(date +%s)))
  [[ $left -gt 0 ]] || break
  log="$scratch/run.log"
  # -timeout: one input taking longer is a hang (a finding). -rss_limit_mb: below what a 2-core CI machine has.
  if "$binary" -max_total_time="$left" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$artifacts/" "$@" "$work" "$seeds" >"$log" 2>&1; then
    tail -n 20 "$log"
    break
  fi
  frame="$(first_own_frame "$log")"
  if [[ "$frame" == *libhdf5* ]]; then
    upstream=$((upstream + 1))
    echo "upstream HDF5 crash ${upstream} (not failing; input kept in ${artifacts}): ${frame}"
    grep -E '^SUMMARY:' "$log" || true
    continue
  fi
  cat "$log"
  echo "FAIL: $(basename "$binary"): a finding in our code; input in $artifacts" >&2
  exit 1
done
echo "$(basename "$binary"): ${seconds} s fuzzed; upstream HDF5 crashes: ${upstream}"
