#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds everything, runs every test target, and ends with
# the line "N passed, N failed" (counts of test targets).
set -uo pipefail
cd "$(dirname "$0")/.."

bash tools/install_deps.sh || { echo "0 passed, 1 failed"; exit 1; }

log=$(mktemp /tmp/sluice-test.XXXXXX)
bazel test //... --test_summary=short 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

passed=$(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$log" || true)
failed=$(grep -cE '^//[^ ]+ +(\(cached\) )?(FAILED|TIMEOUT|NO STATUS|INCOMPLETE|FLAKY)' "$log" || true)
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  # The build itself broke (no test could report): count that as a failure.
  failed=1
fi
rm -f "$log"
echo "${passed} passed, ${failed} failed"
[ "$status" -eq 0 ] && [ "$failed" -eq 0 ]
