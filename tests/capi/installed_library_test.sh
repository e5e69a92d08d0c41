#!/bin/bash
# Checks the installed libraries themselves: libsluice.so exports exactly the C API (every sluice_* function of
# sluice.h and nothing else), carries no RPATH/RUNPATH (neither into Bazel's cache nor, under --config=cuda, to
# /usr/local/cuda), and libsluice.a holds the C API together with the internals it needs; the install tree has
# every file the docs promise, with the VERSION file's version. Its dependencies follow the build (docs/GPU.md,
# "The installed library"):
#   cpu:  no CUDA library among libsluice.so's NEEDED entries (the CUDA check below is skipped, with the reason);
#   cuda: cudart, cuBLAS, cuBLASLt and NCCL are NEEDED (never libcuda, the driver), and with the documented
#         environment, LD_LIBRARY_PATH=$CUDA_HOME/lib64:$CUDA_HOME/lib, every dependency of the installed
#         libraries resolves, the CUDA ones into the toolkit. Whether the system loader alone (ld.so.conf) finds
#         them is reported, not required.
#
# Usage: installed_library_test.sh INSTALL_SH TARBALL SLUICE_H VERSION_FILE cpu|cuda [CUDA_HOME]
set -euo pipefail

if [[ $# -lt 5 || $# -gt 6 || ! "$5" =~ ^(cpu|cuda)$ ]]; then
  echo "usage: $0 INSTALL_SH TARBALL SLUICE_H VERSION_FILE cpu|cuda [CUDA_HOME]" >&2
  exit 2
fi
install_sh="$1" tarball="$2" header="$3" version="$(tr -d ' \t\r\n' < "$4")" build="$5"
cuda_home="${6:-/usr/local/cuda}"
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

prefix="$(mktemp -d "${TEST_TMPDIR:-/tmp}/prefix.XXXXXX")"
bash "$install_sh" "$tarball" "$prefix"

for file in include/sluice/sluice.h include/sluice/sluice.mod lib/libsluice.so lib/libsluice.a \
    lib/libsluice_fortran.so lib/libsluice_fortran.a lib/pkgconfig/sluice.pc lib/pkgconfig/sluice-fortran.pc \
    lib/cmake/sluice/sluice-config.cmake lib/cmake/sluice/sluice-config-version.cmake bin/sluice \
    libexec/sluice/sluice-checkpoint-probe share/sluice/fortran/sluice.f90 bin/sluice-mpirun \
    libexec/sluice/sluice-mpirun-rank share/sluice/slurm/local/start.sh share/sluice/slurm/local/stop.sh \
    share/sluice/slurm/local/slurm_common.sh share/sluice/slurm/local/cluster_start.sh \
    share/sluice/slurm/local/cluster_node.sh share/sluice/slurm/local/cluster_stop.sh; do
  [[ -f "$prefix/$file" ]] || fail "install tree lacks $file"
done

# The API, from the header itself: every function it declares, sorted.
expected="$(grep -oE '^[a-z_][a-z_ *]*[ *]sluice_[a-z_]+\(' "$header" | sed -E 's/.*[ *](sluice_[a-z_]+)\($/\1/' | sort -u)"
[[ $(wc -l <<< "$expected") -ge 10 ]] || fail "found only $(wc -l <<< "$expected") functions in $header"
# Each function carries a version node of sluice.map (sluice_x@@SLUICE_0, ...); the nodes themselves are absolute symbols.
exported_versioned="$(nm -D --defined-only "$prefix/lib/libsluice.so" | awk '$2 != "A" { print $3 }' | sort -u)"
unversioned="$(grep -v '@@SLUICE_' <<< "$exported_versioned" || true)"
[[ -z "$unversioned" ]] || fail "libsluice.so exports symbols without a version node (capi/sluice.map): $unversioned"
# The nodes of sluice.map: the device-array calls (sluice_*_device) were added in SLUICE_1, which inherits SLUICE_0;
# every other function stays in SLUICE_0, where programs linked before SLUICE_1 existed look for it.
wrong_node="$(grep -E '_device@@' <<< "$exported_versioned" | grep -v '@@SLUICE_1$' || true)"
wrong_node+="$(grep -vE '_device@@' <<< "$exported_versioned" | grep -v '@@SLUICE_0$' || true)"
[[ -z "$wrong_node" ]] || fail "symbols in the wrong version node (capi/sluice.map): $wrong_node"
[[ $(grep -c '_device@@SLUICE_1$' <<< "$exported_versioned") -eq 5 ]] ||
  fail "libsluice.so does not export the 5 device-array calls in SLUICE_1: $(grep _device <<< "$exported_versioned")"
# Here-strings, not pipes into grep -q: grep stops at the first match, and under pipefail the writer's SIGPIPE
# then fails the check (seen under MPICH, whose library's table is longer).
grep -q ' SLUICE_1$' <<< "$(objdump -T "$prefix/lib/libsluice.so")" || fail "libsluice.so lacks the version node SLUICE_1"
[[ "$(grep -A1 'Name: SLUICE_1' <<< "$(readelf -V "$prefix/lib/libsluice.so")")" == *'Parent 1: SLUICE_0'* ]] ||
  fail "SLUICE_1 does not inherit SLUICE_0 (readelf -V: $(readelf -V "$prefix/lib/libsluice.so" | grep -A1 SLUICE_1))"
exported="$(sed 's/@.*//' <<< "$exported_versioned" | sort -u)"
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

# CUDA: what the installed library needs, and that the documented environment finds it.
needed="$(sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' <<< "$dynamic")"
cuda_needed="$(grep -E '^lib(cuda|cudart|cublas|cublasLt|cufft|cudnn|nccl)\.so' <<< "$needed" || true)"
cuda_summary="CUDA check skipped: built without --config=cuda (no CUDA library needed)"
if [[ "$build" == cpu ]]; then
  [[ -z "$cuda_needed" ]] || fail "the default build's libsluice.so needs CUDA libraries: $(echo $cuda_needed)"
else
  failures_before=$failures
  for lib in libcudart libcublas libcublasLt libcufft libcudnn libnccl; do
    grep -qE "^$lib\.so\.[0-9]+$" <<< "$cuda_needed" || fail "--config=cuda libsluice.so does not need $lib.so.N"
  done
  # The driver library comes with the GPU driver, not the toolkit: cudart loads it at run time, so linking it
  # would make libsluice.so unloadable on a machine without a GPU.
  if grep -qE '^libcuda\.so' <<< "$cuda_needed"; then fail "libsluice.so links the driver library libcuda.so"; fi
  [[ -d "$cuda_home" ]] || fail "CUDA_HOME $cuda_home does not exist"
  documented_env="$cuda_home/lib64:$cuda_home/lib"
  for lib in libsluice_fortran.so libsluice.so; do  # libsluice.so last: its list is used below
    resolved="$(env LD_LIBRARY_PATH="$documented_env" ldd "$prefix/lib/$lib" 2>&1)" ||
      fail "ldd $lib failed with LD_LIBRARY_PATH=$documented_env: $resolved"
    if grep 'not found' <<< "$resolved"; then
      fail "with LD_LIBRARY_PATH=$documented_env, $lib still misses the libraries above"
    fi
  done
  toolkit="$(realpath "$cuda_home")"
  for lib in $cuda_needed; do
    path="$(awk -v lib="$lib" '$1 == lib && $2 == "=>" { print $3 }' <<< "$resolved")"
    [[ -n "$path" && "$(realpath "$path")" == "$toolkit"/* ]] ||
      fail "with LD_LIBRARY_PATH=$documented_env, $lib resolves to '${path:-nothing}', not into $toolkit"
  done
  system_only="$(env -u LD_LIBRARY_PATH ldd "$prefix/lib/libsluice.so" 2>&1 || true)"
  if grep -q 'not found' <<< "$system_only"; then
    loader="the system loader alone does not find them here (no ld.so.conf entry): LD_LIBRARY_PATH is needed"
  else
    loader="the system loader alone (ld.so.conf) also finds them here"
  fi
  cuda_summary="CUDA libraries ($(echo $cuda_needed)) resolve into $toolkit with LD_LIBRARY_PATH=$documented_env; $loader"
  [[ $failures -eq $failures_before ]] || cuda_summary="CUDA check FAILED (see above)"
fi
echo "$cuda_summary"

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
grep -q "set(PACKAGE_VERSION \"$version\")" "$prefix/lib/cmake/sluice/sluice-config-version.cmake" ||
  fail "sluice-config-version.cmake does not say $version"
installed_version="$(for part in MAJOR MINOR PATCH; do
  sed -n "s/^#define SLUICE_VERSION_$part \([0-9][0-9]*\)$/\1/p" "$prefix/include/sluice/sluice.h"; done | paste -sd.)"
[[ "$installed_version" == "$version" ]] || fail "installed sluice.h says $installed_version, VERSION has $version"
command_version="$("$prefix/bin/sluice" --version)" || fail "bin/sluice --version exited non-zero"
[[ "$command_version" == "sluice $version "* ]] || fail "bin/sluice --version says '$command_version', VERSION has $version"

if [[ $failures -ne 0 ]]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "PASS ($build build): $(wc -l <<< "$expected") exported functions, no RUNPATH, static archive complete"
