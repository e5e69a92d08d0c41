#!/usr/bin/env bash
# The main job: a coupled Fortran simulation trains its own surrogate on a 4-rank pipeline, is preempted,
# resumes from its checkpoint, and deploys the surrogate (examples/fortran/diffusion2d.f90). Installs what is
# missing, builds and installs Sluice into a prefix, builds the Fortran program against the installed tree
# (Makefile + pkg-config, as a user would) and runs it: examples/fortran/run_diffusion2d.sh.
#
# Usage: bash tools/run_main.sh [TIME_STEPS [STOP_AT]]   (default 1500 time steps, preempted after 500)
# Output in demo_run/ (recreated): diffusion2d.svg (solver vs surrogate fields, errors, loss curve), loss.csv,
# checkpoints/, surrogate.h5. The second example, the MLP under `sluice train`, is `bash tools/run_mlp.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"

bash tools/install_deps.sh
prefix="$repo/demo_run/prefix"
rm -rf "$repo/demo_run"
bazel run -c opt //capi:install -- "$prefix"

start=$(date +%s)
bash examples/fortran/run_diffusion2d.sh "$prefix" "$repo/demo_run" "$@"
echo "demo: $(( $(date +%s) - start )) s after the build"
