#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds everything, runs every test target, and ends with
# the line "N passed, N failed" (counts of test targets).
#
# Two configurations, one after the other:
#   default  `bazel test //...`                 (always)
#   cuda     `bazel test --config=cuda //...`   (when the CUDA toolkit is installed, /usr/local/cuda/bin/nvcc; it
#            comes with the machine image, not from apt, so without it this part is skipped and says why). Without
#            a GPU the GPU tests skip with their reason; everything else runs against the CUDA build. Its output
#            folder is its own (--platform_suffix=cuda in .bazelrc), so neither configuration evicts the other's.
# Each configuration prints its own "<config> configuration: N passed, N failed"; the last line sums both.
# SLUICE_SKIP_CUDA=1 skips the cuda configuration (for a quick local run; CI runs it).
set -uo pipefail
cd "$(dirname "$0")/.."

bash tools/install_deps.sh || { echo "0 passed, 1 failed"; exit 1; }

readonly nvcc=/usr/local/cuda/bin/nvcc  # the path .bazelrc's --config=cuda builds with (kernels/cuda/cuda.bzl)
total_passed=0
total_failed=0
all_ok=1
summaries=()

# run_suite NAME BAZEL_TEST_FLAGS...: runs every test target of one configuration and adds up its counts.
run_suite() {
  local name="$1"
  shift
  local log status passed failed
  log=$(mktemp /tmp/sluice-test.XXXXXX)
  echo "=== ${name} configuration: bazel test${*:+ $*} //..."
  bazel test "$@" //... --test_summary=short 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  passed=$(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$log" || true)
  failed=$(grep -cE '^//[^ ]+ +(\(cached\) )?(FAILED|TIMEOUT|NO STATUS|INCOMPLETE|FLAKY)' "$log" || true)
  if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
    # The build itself broke (no test could report): count that as a failure.
    failed=1
  fi
  rm -f "$log"
  [ "$status" -eq 0 ] && [ "$failed" -eq 0 ] || all_ok=0
  total_passed=$((total_passed + passed))
  total_failed=$((total_failed + failed))
  summaries+=("${name} configuration: ${passed} passed, ${failed} failed")
}

run_suite default
if [ "${SLUICE_SKIP_CUDA:-0}" = 1 ]; then
  summaries+=("cuda configuration: skipped (SLUICE_SKIP_CUDA=1)")
elif [ ! -x "$nvcc" ]; then
  summaries+=("cuda configuration: skipped (no CUDA toolkit: $nvcc not found; it comes with the machine image)")
else
  run_suite cuda --config=cuda
fi

printf '%s\n' "${summaries[@]}"
echo "${total_passed} passed, ${total_failed} failed"
[ "$all_ok" -eq 1 ]
