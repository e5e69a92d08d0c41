#!/usr/bin/env bash
# No class in core/runtime has more than 20 public methods (docs/ARCHITECTURE.md). Also proves the counter can fail:
# a fixture class with 21 public methods is refused, naming it and its count, and one with exactly 20 (and
# constructors, deleted copies, fields, nested types and private methods that do not count) is accepted.
set -uo pipefail
counter="$1" anchor="$2"
# The anchor is fixtures/public_methods/within/narrow.h. Runfiles are symlinks into the workspace's source tree,
# so following it finds the fixtures and the tree to scan.
fixtures="$(cd "$(dirname "$(readlink -f "$anchor")")/.." && pwd)"
root="$(cd "$fixtures/../../../.." && pwd)"
fail() { echo "FAIL: $*"; exit 1; }

[ -f "$root/core/runtime/trainer.h" ] || fail "source tree not found at $root"
python3 "$counter" check "$root/core/runtime" || fail "a core/runtime class has more than 20 public methods (above)"

out="$(python3 "$counter" check "$fixtures/over")" && fail "a class with 21 public methods was accepted: $out"
grep -qF "hub.h: Hub has 21 public methods (limit 20)" <<< "$out" || fail "the 21-method class was not named: $out"
grep -q "hidden" <<< "$out" && fail "a private method was counted: $out"

python3 "$counter" check "$fixtures/within" >/dev/null || fail "a class with 20 public methods was refused"
report="$(python3 "$counter" report "$fixtures/within")"
grep -qxF "narrow.h: Narrow: 20" <<< "$report" || fail "Narrow not counted as 20: $report"
grep -qxF "narrow.h: Part: 1" <<< "$report" || fail "the nested struct's method not counted as its own: $report"
grep -q "Plain" <<< "$report" && fail "a struct without methods was reported: $report"
echo "PASS: public methods"
