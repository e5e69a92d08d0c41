#!/bin/bash
# The install tree's `sluice` command: `bazel run //capi:install -- PREFIX` puts an optimized build at
# PREFIX/bin/sluice (`sluice --version` names the build), and `PREFIX/bin/sluice submit --dry-run` writes
# PREFIX/bin/sluice into the batch script, with no trace of Bazel's output tree and no warning. The same command
# run from Bazel's output tree still works but warns that compute nodes may not see it.
#
# Usage: installed_sluice_command_test.sh INSTALL_SH TARBALL CONFIG BAZEL_SLUICE
set -euo pipefail

if [[ $# -ne 4 ]]; then
  echo "usage: $0 INSTALL_SH TARBALL CONFIG BAZEL_SLUICE" >&2
  exit 2
fi
install_sh="$1" tarball="$2" config="$(realpath "$3")" bazel_sluice="$4"
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# Not under TEST_TMPDIR: that lies inside Bazel's output tree, where the installed binary would rightly warn.
work="$(mktemp -d /tmp/installed_sluice.XXXXXX)"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix with space"
bash "$install_sh" "$tarball" "$prefix"
installed="$prefix/bin/sluice"
[[ -x "$installed" ]] || { echo "FAIL: the install tree has no executable bin/sluice" >&2; exit 1; }

version="$("$installed" --version)" || fail "sluice --version exited non-zero"
echo "sluice --version: $version"
[[ "$version" == *"optimized build"* ]] || fail "the installed sluice is not an optimized build: '$version'"
[[ "$version" != *"unoptimized"* ]] || fail "the installed sluice is an unoptimized build: '$version'"
if readelf -d "$installed" | grep -E 'R(UN)?PATH'; then fail "bin/sluice carries an RPATH/RUNPATH (see above)"; fi

# From the installed prefix: the script runs the installed binary.
(cd "$work" && "$installed" submit "$config" --nodes 1 --dry-run --set checkpoint.dir="$work/ckpt" \
  --set checkpoint.every=5 > "$work/installed.sbatch" 2> "$work/installed.err") ||
  fail "PREFIX/bin/sluice submit --dry-run exited non-zero: $(cat "$work/installed.err")"
bash -n "$work/installed.sbatch" || fail "the generated script is not valid bash"
grep -qF "$installed" "$work/installed.sbatch" || fail "the batch script does not name $installed"
grep -qF "'$installed'" "$work/installed.sbatch" || fail "the batch script does not quote '$installed' (it has a space)"
if grep -E 'bazel-out|execroot|_bazel_' "$work/installed.sbatch"; then
  fail "the batch script written by the installed sluice names Bazel's output tree (see above)"
fi
[[ ! -s "$work/installed.err" ]] || fail "the installed sluice warned: $(cat "$work/installed.err")"

# From Bazel's output tree: still a script, plus the advice to install.
"$bazel_sluice" submit "$config" --nodes 1 --dry-run --set checkpoint.dir="$work/ckpt" --set checkpoint.every=5 \
  > "$work/bazel.sbatch" 2> "$work/bazel.err" || fail "bazel-bin sluice submit --dry-run exited non-zero"
grep -q "Bazel's output tree" "$work/bazel.err" || fail "no warning for a sluice run from Bazel's output tree"
grep -qF "bazel run //capi:install" "$work/bazel.err" || fail "the warning does not say how to install"

if [[ $failures -ne 0 ]]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "PASS"
