# Sourced by the `sluice` command-line tests: failure counting, a private work directory that also holds
# Open MPI's session files (concurrent mpiruns under Bazel collide otherwise), one BLAS thread per rank, and
# the closing verdict. Usage: source cli_test_env.sh; ...; finish "what was checked"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

work="$(mktemp -d /tmp/sl-cli.XXXXXX)"
trap 'rm -rf "$work"' EXIT
export TMPDIR="$work" OMPI_MCA_orte_tmpdir_base="$work" OMPI_MCA_btl_vader_backing_directory="$work"
export OPENBLAS_NUM_THREADS=1

finish() {
  if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
  fi
  echo "all $1 checks passed"
}
