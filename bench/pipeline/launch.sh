# Sourced (not run) by run.sh and side_by_side.sh: how the pipeline benchmark is built and launched, in one place.
#   build_pipeline_bench            builds //bench/pipeline:pipeline_bench with -c opt, sets $bench_binary
#   launch_pipeline_bench NP BLAS BIND ARGS...
#                                   runs it on NP ranks with OPENBLAS_NUM_THREADS=BLAS, mpirun --bind-to BIND
#                                   (core: each rank owns one core; none: the rank's BLAS threads may use all)
# Each launch gets its own Open MPI session directory (other engineers' mpiruns may be running).

build_pipeline_bench() {
  bazel build -c opt //bench/pipeline:pipeline_bench >/dev/null 2>&1 || bazel build -c opt //bench/pipeline:pipeline_bench
  # bazel-bin follows the last build's mode (another engineer's fastbuild, say): take the opt output explicitly.
  bench_binary="$(bazel info -c opt bazel-bin 2>/dev/null)/bench/pipeline/pipeline_bench"
}

launch_pipeline_bench() {
  local ranks="$1" blas="$2" bind="$3"
  shift 3
  local private_tmp status=0
  private_tmp="$(mktemp -d /tmp/plb.XXXXXX)"
  TMPDIR="$private_tmp" OMPI_MCA_orte_tmpdir_base="$private_tmp" OMPI_MCA_btl_vader_backing_directory="$private_tmp" \
    OPENBLAS_NUM_THREADS="$blas" \
    mpirun --allow-run-as-root -np "$ranks" --bind-to "$bind" --mca btl self,vader -x OPENBLAS_NUM_THREADS \
    "$bench_binary" "$@" || status=$?
  rm -rf "$private_tmp"
  return $status
}
