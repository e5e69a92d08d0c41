#!/bin/bash
# Installs Sluice from the //capi:install_tree tarball into a fresh prefix, builds one example OUTSIDE Bazel the
# way a user would (Makefile + pkg-config, or CMake + find_package), runs it on 4 ranks, and checks that it
# exits 0 and prints a finite loss that went down.
#
# Usage: examples_build_test.sh MODE INSTALL_SH TARBALL MPI_RUNNER EXAMPLE_FILE...
#   MODE: c_make | c_static | c_cmake | fortran_make | fortran_cmake
set -euo pipefail

if [[ $# -lt 5 ]]; then
  echo "usage: $0 MODE INSTALL_SH TARBALL MPI_RUNNER EXAMPLE_FILE..." >&2
  exit 2
fi
mode="$1" install_sh="$2" tarball="$3" runner="$4"
shift 4
example_dir="$(dirname "$1")"

fail() {
  echo "FAIL ($mode): $*" >&2
  exit 1
}

work="$(mktemp -d "${TEST_TMPDIR:-/tmp}/example.XXXXXX")"
prefix="$work/prefix"
bash "$install_sh" "$tarball" "$prefix"
# Runfiles are read-only symlinks; a user builds in a writable copy of the sources.
mkdir "$work/src"
cp -L "$example_dir"/* "$work/src/"
chmod -R u+w "$work/src"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"

case "$mode" in
  c_make) make -C "$work/src" ; program="$work/src/train_mlp" ;;
  c_static) make -C "$work/src" STATIC=1 ; program="$work/src/train_mlp" ;;
  fortran_make) make -C "$work/src" ; program="$work/src/heat_surrogate" ;;
  c_cmake | fortran_cmake)
    cmake -S "$work/src" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release
    cmake --build "$work/build"
    program="$(find "$work/build" -maxdepth 1 -type f -executable \( -name train_mlp -o -name heat_surrogate \))"
    ;;
  *) echo "$0: unknown mode '$mode' (c_make, c_static, c_cmake, fortran_make, fortran_cmake)" >&2; exit 2 ;;
esac
[[ -x "$program" ]] || fail "the build produced no program"

# The program must use the library it was just built against: the installed one, or none (static).
if [[ "$mode" == c_static ]]; then
  if grep -q 'libsluice' <<< "$(readelf -d "$program")"; then fail "static build still needs a shared libsluice"; fi
else
  resolved="$(ldd "$program" | awk '$1 == "libsluice.so" { print $3 }')"
  [[ "$resolved" == "$prefix/lib/libsluice.so" || "$(realpath "$resolved")" == "$(realpath "$prefix/lib/libsluice.so")" ]] ||
    fail "libsluice.so resolves to '$resolved', not the installed $prefix/lib/libsluice.so"
fi

output="$work/output.txt"
if ! bash "$runner" 4 "$program" > "$output" 2>&1; then
  cat "$output" >&2
  fail "the example exited non-zero under mpirun -np 4"
fi
cat "$output"

# "step N loss L" lines (rank 0 only): at least 3, all finite, and the last at most half the first.
awk '
  $1 == "step" && $3 == "loss" {
    n++
    value = $4 + 0
    if ($4 !~ /^[-+]?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$/) { print "not a finite number: " $0; bad = 1 }
    if (n == 1) first = value
    last = value
  }
  END {
    if (n < 3) { print "expected at least 3 \"step N loss L\" lines, got " n; exit 1 }
    if (bad) exit 1
    if (!(last <= 0.5 * first)) { print "loss did not go down: first " first ", last " last; exit 1 }
    print "loss went from " first " to " last " in " n " steps"
  }' "$output" || fail "loss check failed"
echo "PASS ($mode)"
