#!/bin/bash
# The main job, shortened: installs the //capi:install_tree tarball into a fresh prefix and runs
# examples/fortran/run_diffusion2d.sh (the script tools/run_main.sh runs) with TIME_STEPS/STOP_AT below, once with
# the built-in convolutional U-Net surrogate (diffusion2d.yaml) and once with the solver's stencil as a custom layer
# (diffusion2d_stencil.yaml), and, shorter still, with the small vision transformer (diffusion2d_vit.yaml: patch 4,
# 8 blocks of dim 128 over the 4 ranks; ~20 GFLOP a step, so only the lifecycle is checked in CI's minutes, and the
# verdict only for being finite: 16 steps do not train a transformer). Checks for each
#  - phase 1 was preempted with exit 75 (the script itself fails otherwise) and phase 2 resumed from a
#    checkpoint at a time step > 0, the one phase 1 stopped at;
#  - the verdict line is there, both errors are finite, and the surrogate beats persistence;
#  - the SVG is well-formed XML with the five panels and a loss curve covering both runs (svg_check.py).
#
# Usage: diffusion2d_demo_test.sh INSTALL_SH TARBALL RUN_DIFFUSION2D_SH SVG_CHECK_PY
set -euo pipefail

if [[ $# -ne 4 ]]; then
  echo "usage: $0 INSTALL_SH TARBALL RUN_DIFFUSION2D_SH SVG_CHECK_PY" >&2
  exit 2
fi
install_sh="$1" tarball="$2" run_demo="$3" svg_check="$4"
readonly limit_s=240

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

work="$(mktemp -d "${TEST_TMPDIR:-/tmp}/diffusion2d.XXXXXX")"
bash "$install_sh" "$tarball" "$work/prefix"
# config, time steps, the step phase 1 stops at, whether the surrogate must beat persistence
for run in diffusion2d.yaml:150:60:beats diffusion2d_stencil.yaml:150:60:beats diffusion2d_vit.yaml:16:8:finite; do
  IFS=: read -r config time_steps stop_at verdict_rule <<< "$run"
  output="$work/output-$config.txt"
  status=0
  DIFFUSION2D_CONFIG="$config" timeout "$limit_s" bash "$run_demo" "$work/prefix" "$work/run-$config" "$time_steps" "$stop_at" > "$output" 2>&1 || status=$?
  cat "$output"
  [[ $status -ne 124 ]] || fail "$config: the demo took more than $limit_s s"
  [[ $status -eq 0 ]] || fail "$config: the demo exited with status $status"

  resumed="$(sed -n 's/^diffusion2d: resumed from checkpoint at time step \([0-9]*\).*/\1/p' "$output")"
  [[ -n "$resumed" ]] || fail "$config: phase 2 did not resume from a checkpoint"
  [[ "$resumed" -eq "$stop_at" ]] || fail "$config: phase 2 resumed at time step $resumed, phase 1 stopped at $stop_at"
  grep -q "^diffusion2d: trained to time step $time_steps," "$output" || fail "$config: phase 2 did not finish $time_steps steps"

  verdict="$(grep '^verdict: surrogate error ' "$output")" || fail "$config: no verdict line"
  read -r surrogate persistence < <(echo "$verdict" | awk '{ print $4, $7 }')
  awk -v s="$surrogate" -v p="$persistence" -v rule="$verdict_rule" 'BEGIN {
    finite = "^[0-9]+\\.?[0-9]*([eE][-+]?[0-9]+)?$"
    if (s !~ finite || p !~ finite) { print "errors are not finite numbers: " s ", " p; exit 1 }
    if (rule == "beats" && !(s + 0 < p + 0)) { print "surrogate error " s " does not beat persistence " p; exit 1 }
  }' || fail "$config: verdict check failed: $verdict"

  svg="$work/run-$config/diffusion2d.svg"
  [[ -s "$svg" ]] || fail "$config: no picture at $svg"
  # The loss curve: every time step of both runs, one point each.
  python3 "$svg_check" "$svg" "$time_steps" || fail "$config: the picture is not what the demo promises"
  echo "PASS ($config): preempted at $stop_at, resumed, $verdict"
done
