#!/bin/bash
# A Fortran-only CMake project (`project(x LANGUAGES Fortran)`, tests/capi/fortran_only_cmake) against a fresh
# install: find_package(sluice) must configure without a C compiler, build the module from the installed source
# PREFIX/share/sluice/fortran/sluice.f90 in the project's own build tree (not use the prebuilt sluice.mod), link
# the installed libsluice.so, and the program must train on 2 ranks.
#
# Usage: cmake_fortran_only_test.sh INSTALL_SH TARBALL MPI_RUNNER PROJECT_FILE...
set -euo pipefail

if [[ $# -lt 4 ]]; then
  echo "usage: $0 INSTALL_SH TARBALL MPI_RUNNER PROJECT_FILE..." >&2
  exit 2
fi
install_sh="$1" tarball="$2" runner="$3"
shift 3
project_dir="$(dirname "$1")"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

work="$(mktemp -d "${TEST_TMPDIR:-/tmp}/fortran_only.XXXXXX")"
prefix="$work/prefix"
bash "$install_sh" "$tarball" "$prefix"
[[ -f "$prefix/share/sluice/fortran/sluice.f90" ]] || fail "the install tree lacks share/sluice/fortran/sluice.f90"
mkdir "$work/src"
cp -L "$project_dir"/* "$work/src/"
chmod -R u+w "$work/src"

# No C or C++ compiler in reach: the package must not need one in a Fortran-only project.
cmake -S "$work/src" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=/nonexistent/cc -DCMAKE_CXX_COMPILER=/nonexistent/c++ > "$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; fail "cmake could not configure the Fortran-only project"; }
cmake --build "$work/build" --verbose > "$work/build.log" 2>&1 || { cat "$work/build.log"; fail "the build failed"; }

# The module came from the installed source, compiled here.
grep -q "share/sluice/fortran/sluice.f90" "$work/build.log" || fail "the build did not compile the installed sluice.f90"
module="$(find "$work/build" -name sluice.mod | head -1)"
[[ -n "$module" ]] || fail "no sluice.mod in the project's build tree"
if grep -q -- "-I$prefix/include/sluice" "$work/build.log"; then
  fail "the build put the prebuilt module directory $prefix/include/sluice on the include path"
fi
program="$work/build/fortran_only"
[[ -x "$program" ]] || fail "the build produced no program"
resolved="$(ldd "$program" | awk '$1 == "libsluice.so" { print $3 }')"
[[ "$(realpath "$resolved")" == "$(realpath "$prefix/lib/libsluice.so")" ]] ||
  fail "libsluice.so resolves to '$resolved', not the installed one"

timeout 60 bash "$runner" 2 "$program" > "$work/run.log" 2>&1 || { cat "$work/run.log"; fail "the program failed"; }
cat "$work/run.log"
grep -q "fortran-only project trained: loss" "$work/run.log" || fail "the program did not report its training step"
echo "PASS"
