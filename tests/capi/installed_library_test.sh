#!/bin/bash
# Checks the installed libraries themselves: libsluice.so exports exactly the C API (every sluice_* function of
# sluice.h and nothing else), carries no RUNPATH into Bazel's cache, and libsluice.a holds the C API together
# with the internals it needs; the install tree has every file the docs promise, with the VERSION file's version.
#
# Usage: installed_library_test.sh INSTALL_SH TARBALL SLUICE_H VERSION_FILE
set -euo pipefail

if [[ $# -ne 4 ]]; then
  echo "usage: $0 INSTALL_SH TARBALL SLUICE_H VERSION_FILE" >&2
  exit 2
fi
install_sh="$1" tarball="$2" header="$3" version="$(tr -d ' \t\r\n' < "$4")"
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

prefix="$(mktemp -d "${TEST_TMPDIR:-/tmp}/prefix.XXXXXX")"
bash "$install_sh" "$tarball" "$prefix"

for file in include/sluice/sluice.h include/sluice/sluice.mod lib/libsluice.so lib/libsluice.a \
    lib/libsluice_fortran.so lib/libsluice_fortran.a lib/pkgconfig/sluice.pc lib/pkgconfig/sluice-fortran.pc \
    lib/cmake/Sluice/SluiceConfig.cmake lib/cmake/Sluice/SluiceConfigVersion.cmake; do
  [[ -f "$prefix/$file" ]] || fail "install tree lacks $file"
done

# The API, from the header itself: every function it declares, sorted.
expected="$(grep -oE '^[a-z_][a-z_ *]*[ *]sluice_[a-z_]+\(' "$header" | sed -E 's/.*[ *](sluice_[a-z_]+)\($/\1/' | sort -u)"
[[ $(wc -l <<< "$expected") -ge 10 ]] || fail "found only $(wc -l <<< "$expected") functions in $header"
exported="$(nm -D --defined-only "$prefix/lib/libsluice.so" | awk '{ print $3 }' | sort -u)"
if [[ "$exported" != "$expected" ]]; then
  fail "libsluice.so exports other symbols than sluice.h declares:"
  diff <(echo "$expected") <(echo "$exported") >&2 || true
fi

dynamic="$(readelf -d "$prefix/lib/libsluice.so")"
grep -q 'Library soname: \[libsluice.so\]' <<< "$dynamic" || fail "libsluice.so has no SONAME libsluice.so"
if grep -E 'R(UN)?PATH' <<< "$dynamic"; then fail "libsluice.so carries an RPATH/RUNPATH (see above)"; fi
if grep -E 'RPATH|RUNPATH' <<< "$(readelf -d "$prefix/lib/libsluice_fortran.so")" | grep -v '\[\$ORIGIN\]'; then
  fail "libsluice_fortran.so has a RUNPATH other than \$ORIGIN"
fi
if strings "$prefix/lib/libsluice.so" | grep -E 'bazel-out|execroot|_bazel_'; then
  fail "libsluice.so mentions Bazel's output tree (see above)"
fi

# The static archive: the API and the trainer it drives must both be defined in it.
static_defined="$(nm --defined-only "$prefix/lib/libsluice.a" 2>/dev/null | awk '$2 == "T" { print $3 }')"
for symbol in $expected; do
  grep -qx "$symbol" <<< "$static_defined" || fail "libsluice.a does not define $symbol"
done
grep -q 'sluice7runtime7Trainer5start' <<< "$static_defined" || fail "libsluice.a lacks runtime::Trainer::start"
grep -q 'sluice6config12parse_config' <<< "$static_defined" || fail "libsluice.a lacks config::parse_config"

# pkg-config must find the prefix the tree was unpacked into, wherever that is.
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
libdir="$(pkg-config --variable=libdir sluice)"
[[ "$(realpath "$libdir")" == "$(realpath "$prefix/lib")" ]] || fail "sluice.pc's libdir is $libdir, not $prefix/lib"
pkg-config --exists 'sluice-fortran' || fail "pkg-config cannot resolve sluice-fortran"

# Every installed statement of the version is the VERSION file's.
[[ "$(pkg-config --modversion sluice)" == "$version" ]] ||
  fail "sluice.pc has version $(pkg-config --modversion sluice), VERSION has $version"
[[ "$(pkg-config --modversion sluice-fortran)" == "$version" ]] || fail "sluice-fortran.pc's version is not $version"
grep -q "set(PACKAGE_VERSION \"$version\")" "$prefix/lib/cmake/Sluice/SluiceConfigVersion.cmake" ||
  fail "SluiceConfigVersion.cmake does not say $version"
installed_version="$(for part in MAJOR MINOR PATCH; do
  sed -n "s/^#define SLUICE_VERSION_$part \([0-9][0-9]*\)$/\1/p" "$prefix/include/sluice/sluice.h"; done | paste -sd.)"
[[ "$installed_version" == "$version" ]] || fail "installed sluice.h says $installed_version, VERSION has $version"

if [[ $failures -ne 0 ]]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "PASS: $(wc -l <<< "$expected") exported functions, no RUNPATH, static archive complete"
