#!/bin/bash
# Pipeline training benchmark (issue 3): every schedule against the sequential run, p = 2 ranks.
#
# Usage (from anywhere): bench/pipeline/run.sh [pipeline_bench options...]
#   e.g. bench/pipeline/run.sh --steps 30 --schedules 1f1b zb-v
# One BLAS thread per rank and one core per rank (--bind-to core): on a 2-core machine the two ranks then own
# the machine, and neither BLAS threads nor the scheduler move work between them. Anything else running on the
# machine shows up as bubble (a descheduled rank makes the other wait): check the load average it prints.
set -euo pipefail

repo_root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$repo_root"
bazel build -c opt //bench/pipeline:pipeline_bench >/dev/null 2>&1 || bazel build -c opt //bench/pipeline:pipeline_bench
# bazel-bin follows the last build's mode (another engineer's fastbuild, say): take the opt output explicitly.
bench_binary="$(bazel info -c opt bazel-bin 2>/dev/null)/bench/pipeline/pipeline_bench"

private_tmp="$(mktemp -d /tmp/plb.XXXXXX)"  # own Open MPI session dir: other mpiruns may be running
trap 'rm -rf "$private_tmp"' EXIT
export TMPDIR="$private_tmp" OMPI_MCA_orte_tmpdir_base="$private_tmp" OMPI_MCA_btl_vader_backing_directory="$private_tmp"
export OPENBLAS_NUM_THREADS=1

echo "command: bench/pipeline/run.sh $*"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
mpirun --allow-run-as-root -np 2 --bind-to core --mca btl self,vader -x OPENBLAS_NUM_THREADS \
  "$bench_binary" "$@"
