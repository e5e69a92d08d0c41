#!/bin/bash
# Installs Sluice's C/Fortran API into a prefix.
#
# Usage: bazel run //capi:install -- PREFIX
#   (Bazel passes the tarball built by //capi:install_tree as the first argument.)
# Afterwards: PKG_CONFIG_PATH=PREFIX/lib/pkgconfig pkg-config --cflags --libs sluice
#             cmake -DCMAKE_PREFIX_PATH=PREFIX ...   (find_package(sluice), target Sluice::sluice)
#             PREFIX/bin/sluice submit ...           (the command, optimized, naming itself in batch scripts)
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: bazel run //capi:install -- PREFIX   (PREFIX: directory to install into)" >&2
  exit 2
fi
tarball="$1"
prefix="$2"
if [[ ! -f "$tarball" ]]; then
  echo "$0: install tree '$tarball' not found (build //capi:install_tree)" >&2
  exit 2
fi
# `bazel run` starts in the runfiles tree; a relative PREFIX means relative to where the user typed it.
if [[ "$prefix" != /* && -n "${BUILD_WORKING_DIRECTORY:-}" ]]; then
  prefix="$BUILD_WORKING_DIRECTORY/$prefix"
fi
mkdir -p "$prefix"
tar -C "$prefix" --no-same-owner -xf "$tarball"
echo "Sluice installed into $prefix"
