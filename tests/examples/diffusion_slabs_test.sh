#!/bin/bash
# examples/fortran/diffusion_slabs.f90, built as a user would (its Makefile, pkg-config) against the
# //capi:install_tree tarball: a diffusion code on 4 ranks, each holding a slab of rows of every field and doing its
# own halo exchange, trains a conv surrogate on its own slabs (sluice_trainer_set_domain, pipeline.domain [4, 1]; no
# gather). Checks that
#  - the loss falls: the mean of the last 10 of 40 steps is below a tenth of the first 10's;
#  - the trained parameters are the undecomposed run's (the same program on 1 rank: one slab, the whole field) bit
#    for bit, and so are the logged losses; the comparison can fail: 41 steps give other parameters.
#
# Usage: diffusion_slabs_test.sh INSTALL_SH TARBALL SOURCE_DIR_FILE
#   SOURCE_DIR_FILE: any file of examples/fortran (its directory holds the Makefile and the program)
set -euo pipefail

if [[ $# -ne 3 ]]; then
  echo "usage: $0 INSTALL_SH TARBALL SOURCE_DIR_FILE" >&2
  exit 2
fi
install_sh="$1" tarball="$2" sources="$(dirname "$3")"
readonly limit_s=120

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

work="$(mktemp -d "${TEST_TMPDIR:-/tmp}/diffusion_slabs.XXXXXX")"
bash "$install_sh" "$tarball" "$work/prefix"
mkdir -p "$work/build"
cp "$sources"/Makefile "$sources"/diffusion_slabs.f90 "$work/build/"
chmod -R u+w "$work/build"
PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" make -s -C "$work/build" diffusion_slabs

export OPENBLAS_NUM_THREADS=1
mpi_tmp="$(mktemp -d /tmp/sl-slabs.XXXXXX)"
trap 'rm -rf "$mpi_tmp"' EXIT
export TMPDIR="$mpi_tmp" OMPI_MCA_orte_tmpdir_base="$mpi_tmp" OMPI_MCA_btl_vader_backing_directory="$mpi_tmp"
root_flag=()
[[ "$(id -u)" -eq 0 ]] && root_flag=(--allow-run-as-root)
# run RANKS STEPS PARAMETERS_FILE: the program's output
run() {
  timeout "$limit_s" mpirun "${root_flag[@]}" --oversubscribe -np "$1" --mca btl self,vader \
    "$work/build/diffusion_slabs" "$2" "$3" 2>&1 || fail "$1 rank(s), $2 steps: exited $?"
}

slabs="$(run 4 40 "$work/p4.bin")"
echo "$slabs"
whole="$(run 1 40 "$work/p1.bin")"
echo "$whole"
summary="$(echo "$slabs" | grep '^diffusion_slabs: 4 slabs, mean loss')" || fail "no summary line on 4 ranks"
read -r first last < <(echo "$summary" | sed 's/.*first 10 steps *\([^,]*\), of the last 10 *\(.*\)/\1 \2/')
awk -v f="$first" -v l="$last" 'BEGIN { exit !(l + 0 < (f + 0) / 10) }' ||
  fail "the loss did not fall tenfold: first 10 steps $first, last 10 $last"
[[ "$(echo "$slabs" | grep '^step ')" == "$(echo "$whole" | grep '^step ')" ]] ||
  fail "the logged losses differ between 4 slabs and the whole field"
[[ -s "$work/p4.bin" ]] || fail "no parameters written"
cmp "$work/p4.bin" "$work/p1.bin" || fail "4 slabs trained other parameters than the undecomposed run"
run 1 41 "$work/p41.bin" > /dev/null
cmp -s "$work/p41.bin" "$work/p1.bin" && fail "cmp did not see the parameters of another step count"
echo "PASS: 4 slabs trained the undecomposed run's parameters bit for bit (loss $first -> $last)"
