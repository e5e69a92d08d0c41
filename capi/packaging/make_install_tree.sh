#!/bin/bash
# Lays out Sluice's install tree and packs it into a tarball (run by the //capi:install_tree genrule).
#
# Usage: make_install_tree.sh OUT_TAR SLUICE_H LIBSLUICE_SO LIBSLUICE_A LIBSLUICE_FORTRAN_SO LIBSLUICE_FORTRAN_A
#                             SLUICE_MOD SLUICE_F90 SLUICE_BIN PROBE_BIN MPIRUN_SH MPIRUN_AGENT
#                             (TEMPLATE | SLURM_LOCAL_SH)...
#
# MPIRUN_SH (tools/sluice_mpirun.sh) becomes bin/sluice-mpirun and MPIRUN_AGENT its fork agent
# libexec/sluice/sluice-mpirun-rank; the *.sh files among the rest are slurm/local's harness scripts
# (share/sluice/slurm/local/), the others the pkg-config / CMake templates.
#
# The tree is relocatable: the .pc files locate the prefix from ${pcfiledir} and the CMake package from its own
# directory, so unpacking it anywhere (bazel run //capi:install -- PREFIX, or tar -x) gives a working install.
set -euo pipefail

if [[ $# -lt 12 ]]; then
  echo "usage: $0 OUT_TAR SLUICE_H LIBSLUICE_SO LIBSLUICE_A LIBSLUICE_FORTRAN_SO LIBSLUICE_FORTRAN_A SLUICE_MOD" \
    "SLUICE_F90 SLUICE_BIN PROBE_BIN MPIRUN_SH MPIRUN_AGENT (TEMPLATE | SLURM_LOCAL_SH)..." >&2
  exit 2
fi
out_tar="$1" header="$2" shared="$3" static="$4" fortran_shared="$5" fortran_static="$6" module="$7"
module_source="$8" command="$9" probe="${10}" mpirun_launcher="${11}" mpirun_agent="${12}"
shift 12
template_dir=""
slurm_local=()
for file in "$@"; do
  case "$file" in
    *.sh) slurm_local+=("$file") ;;
    *) template_dir="$(dirname "$file")" ;;
  esac
done

# The header is the one place the version is defined; everything installed repeats it from there.
version_part() { sed -n "s/^#define SLUICE_VERSION_$1 \([0-9][0-9]*\)$/\1/p" "$header"; }
version="$(version_part MAJOR).$(version_part MINOR).$(version_part PATCH)"
if [[ ! "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo "$0: cannot read SLUICE_VERSION_{MAJOR,MINOR,PATCH} from $header (got '$version')" >&2
  exit 1
fi

# Where Open MPI's mpi_f08.mod lives: sluice.mod refers to it, so Fortran users need it on their -I path.
mpi_module_flags="$(mpifort --showme:compile)"

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
chmod 0755 "$stage"  # mktemp makes it 0700, and tar would give that mode to the user's PREFIX
mkdir -p "$stage/bin" "$stage/libexec/sluice" "$stage/include/sluice" "$stage/lib/pkgconfig" "$stage/lib/cmake/sluice" \
  "$stage/share/sluice/fortran" "$stage/share/sluice/slurm/local"
install -m 0755 "$command" "$stage/bin/sluice"
# The mpirun launcher finds its fork agent in ../libexec/sluice from its own directory.
install -m 0755 "$mpirun_launcher" "$stage/bin/sluice-mpirun"
install -m 0755 "$mpirun_agent" "$stage/libexec/sluice/sluice-mpirun-rank"
# A private Slurm on one machine (single node, or namespace nodes) to try jobs on; the scripts find each other
# in their own directory.
for script in "${slurm_local[@]}"; do
  mode=0755
  [ "$(basename "$script")" != slurm_common.sh ] || mode=0644  # sourced, not run
  install -m "$mode" "$script" "$stage/share/sluice/slurm/local/$(basename "$script")"
done
# The checkpoint probe: libsluice.so (PREFIX/lib) and bin/sluice look for it in ../libexec/sluice from their own
# directory, so that a checkpoint that crashes libhdf5 kills the probe, not the host (checkpoint/isolated_read.h).
install -m 0755 "$probe" "$stage/libexec/sluice/sluice-checkpoint-probe"
install -m 0644 "$header" "$stage/include/sluice/sluice.h"
install -m 0644 "$module" "$stage/include/sluice/sluice.mod"
# The module's source: other Fortran compilers (and the CMake package, for the user's compiler) build it themselves.
install -m 0644 "$module_source" "$stage/share/sluice/fortran/sluice.f90"
install -m 0755 "$shared" "$stage/lib/libsluice.so"
install -m 0644 "$static" "$stage/lib/libsluice.a"
install -m 0755 "$fortran_shared" "$stage/lib/libsluice_fortran.so"
install -m 0644 "$fortran_static" "$stage/lib/libsluice_fortran.a"

fill() {
  sed -e "s|@VERSION@|$version|g" -e "s|@MPI_FORTRAN_MODULE_FLAGS@|$mpi_module_flags|g" "$1" > "$2"
}
fill "$template_dir/sluice.pc.in" "$stage/lib/pkgconfig/sluice.pc"
fill "$template_dir/sluice-fortran.pc.in" "$stage/lib/pkgconfig/sluice-fortran.pc"
install -m 0644 "$template_dir/sluice-config.cmake" "$stage/lib/cmake/sluice/sluice-config.cmake"
fill "$template_dir/sluice-config-version.cmake.in" "$stage/lib/cmake/sluice/sluice-config-version.cmake"

# Fixed owner and mtime so the tarball is the same on every build.
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime='2024-01-01 00:00:00' -C "$stage" -cf "$out_tar" .
