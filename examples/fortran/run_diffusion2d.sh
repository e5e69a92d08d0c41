#!/usr/bin/env bash
# Builds examples/fortran/diffusion2d against an installed Sluice and runs the demo's three phases on 4 MPI ranks:
#   1. train, interrupted: after STOP_AT time steps the program is preempted (SIGUSR1), writes its checkpoint and
#      exits 75 -- what a Slurm job sees before it is requeued;
#   2. train again: resumes from the checkpoint directory and finishes TIME_STEPS, exporting the model to surrogate.h5;
#   3. deploy: the surrogate against the solver and persistence on unseen fields: the verdict line and the SVG.
# tools/run_main.sh (the README's main job) calls this after building and installing; tests/examples runs it
# with fewer steps against the //capi:install_tree tarball.
#
# Usage: run_diffusion2d.sh PREFIX RUN_DIR [TIME_STEPS [STOP_AT]]   (defaults: 1500 500)
#   DIFFUSION2D_CONFIG=diffusion2d_stencil.yaml trains the solver's own stencil as a custom layer instead of the
#   built-in convolutional surrogate (diffusion2d.yaml); diffusion2d_vit.yaml a small vision transformer (patch 4,
#   8 blocks of dim 128, 2 per rank).
#   PREFIX: an installed Sluice (bazel run //capi:install -- PREFIX). RUN_DIR: created; build and outputs go there.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 PREFIX RUN_DIR [TIME_STEPS [STOP_AT]]" >&2
  exit 2
fi
prefix="$(realpath "$1")"
run_dir="$2"
time_steps="${3:-1500}"
stop_at="${4:-500}"
if (( stop_at <= 0 || stop_at >= time_steps )); then
  echo "$0: STOP_AT ($stop_at) must be between 0 and TIME_STEPS ($time_steps)" >&2
  exit 2
fi
sources="$(cd "$(dirname "$0")" && pwd)"
config="${DIFFUSION2D_CONFIG:-diffusion2d.yaml}"

# A fresh run: an old checkpoint would make phase 1 resume instead of starting over.
rm -rf "$run_dir/checkpoints" "$run_dir/loss.csv" "$run_dir/surrogate.h5" "$run_dir/diffusion2d.svg"

# Build as a user would: a copy of the sources, the Makefile, pkg-config's sluice-fortran.
mkdir -p "$run_dir/build"
run_dir="$(realpath "$run_dir")"
cp "$sources"/Makefile "$sources"/diffusion2d*.f90 "$sources"/diffusion2d*.yaml "$run_dir/build/"
chmod -R u+w "$run_dir/build"
PKG_CONFIG_PATH="$prefix/lib/pkgconfig" make -s -C "$run_dir/build" diffusion2d
cp "$run_dir"/build/diffusion2d*.yaml "$run_dir/"

# One BLAS thread per rank: 4 ranks share the cores. A private temp dir keeps Open MPI's session files apart
# from any other run (concurrent runs otherwise collide).
export OPENBLAS_NUM_THREADS=1
mpi_tmp="$(mktemp -d /tmp/sluice-demo.XXXXXX)"
trap 'rm -rf "$mpi_tmp"' EXIT
export TMPDIR="$mpi_tmp" OMPI_MCA_orte_tmpdir_base="$mpi_tmp" OMPI_MCA_btl_vader_backing_directory="$mpi_tmp"
# Grace period between mpirun's SIGTERM and SIGKILL to the ranks (Open MPI's default, 1 s, is too short to write a
# checkpoint; docs/SLURM.md "With mpirun"). To stop a run and keep its progress, send SIGUSR1 to mpirun (it
# forwards it to the ranks) or use tools/sluice_mpirun.sh, which turns SIGTERM/SIGINT into that.
export OMPI_MCA_odls_base_sigkill_timeout="${OMPI_MCA_odls_base_sigkill_timeout:-30}"
root_flag=()
[[ "$(id -u)" -eq 0 ]] && root_flag=(--allow-run-as-root)
# run4 [MPIRUN_OPTION...] -- PROGRAM_ARGS...: the program on 4 ranks, in the run directory.
run4() {
  local options=()
  while [[ "$1" != -- ]]; do options+=("$1"); shift; done
  shift
  (cd "$run_dir" && mpirun "${root_flag[@]}" "${options[@]}" --oversubscribe -np 4 --mca btl self,vader \
    "$run_dir/build/diffusion2d" "$@")
}

echo "== phase 1: train, preempted after time step $stop_at"
status=0
# --quiet: exit 75 is the expected outcome here, not worth mpirun's "a process returned non-zero" banner.
# A 2 s grace here: this stop is the program's own (no signal), its ranks exit only after the checkpoint is
# renamed into place (a collective step), and mpirun waits twice the grace after any non-zero exit, 75 included.
run4 --quiet --mca odls_base_sigkill_timeout 2 -- train "$config" "$time_steps" "$stop_at" || status=$?
if [[ $status -ne 75 ]]; then
  echo "$0: phase 1 should stop with exit 75 (preempted, checkpoint written), got $status" >&2
  exit 1
fi
echo "== phase 2: train again: resume from $run_dir/checkpoints and finish $time_steps time steps"
run4 -- train "$config" "$time_steps"
echo "== phase 3: deploy the surrogate on unseen fields"
run4 -- deploy "$config"
echo "picture: $run_dir/diffusion2d.svg ($(stat -c %s "$run_dir/diffusion2d.svg") bytes)"
