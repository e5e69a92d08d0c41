#!/bin/bash
# The checkpoint probe in the installed tree: a C program linked against PREFIX/lib/libsluice.so (built outside
# Bazel with mpicc and pkg-config) loads a checkpoint that crashes libhdf5 1.10.8 (tests/fuzz/hdf5_crashes) with
# sluice_model_load. libsluice.so finds PREFIX/libexec/sluice/sluice-checkpoint-probe from its own directory (no
# SLUICE_CHECKPOINT_PROBE), so the load returns SLUICE_ERROR_CHECKPOINT naming the file and the crash. Without the
# installed probe (removed), the same program dies by SIGSEGV, after the once-said warning: what the probe prevents.
# Usage: installed_checkpoint_probe_test.sh INSTALL_SH TARBALL PROGRAM_C CRASHING_FILE
set -u
install_sh="$1" tarball="$2" program_c="$(realpath "$3")" crasher="$(realpath "$4")"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
work="$(mktemp -d /tmp/sl-probe.XXXXXX)"
trap 'rm -rf "$work"' EXIT
unset SLUICE_CHECKPOINT_PROBE

bash "$install_sh" "$tarball" "$work/prefix" >/dev/null || { echo "FAIL: install"; exit 1; }
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
# shellcheck disable=SC2046
mpicc -o "$work/model_load_crashing" "$program_c" $(pkg-config --cflags --libs sluice) ||
  { echo "FAIL: cannot build against the installed tree"; exit 1; }

out="$("$work/model_load_crashing" "$crasher" 2>&1)"
status=$?
echo "$out"
[ "$status" -eq 0 ] || fail "the program ended with status $status (a signal: 128 + N), not with an error status"
echo "$out" | grep -qF "status 8: sluice_model_load: $crasher: the HDF5 library crashed (signal 11, Segmentation fault) reading it" ||
  fail "sluice_model_load did not return CHECKPOINT (8) naming the crash"

rm "$work/prefix/libexec/sluice/sluice-checkpoint-probe"
out="$("$work/model_load_crashing" "$crasher" 2>&1)"
status=$?
echo "$out" | grep -qF "checkpoint.isolated_reads is auto and no sluice-checkpoint-probe was found (looked at $work/prefix/lib/../libexec/sluice/sluice-checkpoint-probe" ||
  fail "without the probe, the in-process read is not announced: $out"
[ "$status" -gt 128 ] || fail "without the probe the program did not die by a signal (status $status): the crash is not reproduced"

[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all installed checkpoint probe checks passed"
