#!/bin/bash
# Pipeline training benchmark (issue 3): every schedule against the sequential run, p = 2 ranks.
#
# Usage (from anywhere): bench/pipeline/run.sh [pipeline_bench options...]
#   e.g. bench/pipeline/run.sh --steps 30 --schedules 1f1b zb-v
# One BLAS thread per rank and one core per rank (--bind-to core): on a 2-core machine the two ranks then own
# the machine, and neither BLAS threads nor the scheduler move work between them. Anything else running on the
# machine shows up as bubble (a descheduled rank makes the other wait): check the load average it prints.
# The PyTorch comparison (issue 17) is side_by_side.sh, which launches the same way (launch.sh).
set -euo pipefail

repo_root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$repo_root"
source bench/pipeline/launch.sh
build_pipeline_bench

echo "command: bench/pipeline/run.sh $*"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
launch_pipeline_bench 2 1 core "$@"
