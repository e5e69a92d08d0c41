#!/bin/bash
# `sluice inspect` on a file that crashes libhdf5 1.10.8 itself (tests/fuzz/hdf5_crashes): the command must not die
# by the signal (exit 139 before the file was read in a forked child) but report it, naming the file, with exit 1.
set -u
sluice="$1"
crasher="$2"
fail() { echo "FAIL: $*"; exit 1; }

out="$("$sluice" inspect "$crasher" 2>&1)"
status=$?
echo "$out"
[ "$status" -eq 1 ] || fail "exit status $status, expected 1"
echo "$out" | grep -qF "$crasher: the HDF5 library crashed (signal 11" || fail "message does not name the crash and file"
echo "$out" | grep -qF "the file is corrupt or not a Sluice checkpoint" || fail "message does not say what it means"
echo PASS
