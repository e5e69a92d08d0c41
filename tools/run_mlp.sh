#!/usr/bin/env bash
# The second example: installs what is missing, builds `sluice`, and trains the example MLP on a 4-rank pipeline
# (1F1B, 8 micro-batches) with Open MPI on this machine. Extra arguments go to `sluice train`, e.g.
#   bash tools/run_mlp.sh --set pipeline.schedule=zb-v --set pipeline.chunks=2 --json
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/install_deps.sh
bazel build -c opt //tools/sluice:sluice

# One BLAS thread per rank: 4 ranks share the cores. A private temp dir keeps Open MPI's session files apart
# from any other run.
export OPENBLAS_NUM_THREADS=1
run_tmp=$(mktemp -d /tmp/sluice-main.XXXXXX)
trap 'rm -rf "$run_tmp"' EXIT
export TMPDIR="$run_tmp" OMPI_MCA_orte_tmpdir_base="$run_tmp" OMPI_MCA_btl_vader_backing_directory="$run_tmp"

# tools/sluice_mpirun.sh, not mpirun: SIGTERM/SIGINT (Ctrl-C) then reach the ranks as the preemption warning,
# so a run given checkpoint.dir stops with a checkpoint and exit 75 (it also sets mpirun's SIGKILL grace period,
# 30 s). See docs/SLURM.md "With mpirun".
root_flag=()
[ "$(id -u)" -eq 0 ] && root_flag=(--allow-run-as-root)
tools/sluice_mpirun.sh "${root_flag[@]}" --oversubscribe -np 4 --mca btl self,vader \
  bazel-bin/tools/sluice/sluice train examples/configs/mlp.yaml "$@"
