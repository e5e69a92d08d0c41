#!/bin/bash
# One job per checkpoint directory (issue 14): a second `sluice train` on a directory another running job uses
# fails at start naming the directory and the holder, while the first finishes; a lock left by a job that is gone
# (this host, dead pid) or by this very Slurm job (a requeue) is taken over.
# Usage: checkpoint_dir_lock_cli_test.sh SLUICE CONFIG
set -u
SLUICE="$1"
CONFIG="$2"
source "$(dirname "$0")/cli_test_env.sh"

dir="$work/ckpt"
lock="$dir/.sluice.lock"
train() { timeout 120 "$SLUICE" train "$CONFIG" --set pipeline.stages=1 --set checkpoint.dir="$dir" "$@" 2>&1; }

# --- two concurrent jobs ---------------------------------------------------------------------------------
train --set steps=3000 --set checkpoint.every=100 >"$work/first.out" &
first=$!
for _ in $(seq 1 300); do [ -s "$lock" ] && break; sleep 0.1; done
[ -s "$lock" ] || fail "the first job never took the lock"
holder="$(sed -n 's/^pid=//p' "$lock")"  # the first sluice's pid (not $first, which is the timeout wrapper's)
kill -0 "$holder" 2>/dev/null || fail "the lock names pid '$holder', which is not running"
out="$(train --set steps=5 --set checkpoint.every=1)"
code=$?
[ "$code" -eq 1 ] || fail "second job exited $code (want 1): $out"
echo "$out" | grep -qF "checkpoint directory '$dir' is in use by another job (host $(hostname), pid $holder, SLURM job ?" ||
  fail "second job's message does not name the directory and holder: $out"
wait "$first"
code=$?
[ "$code" -eq 0 ] || fail "first job exited $code: $(cat "$work/first.out")"
grep -q "done: 3000 steps" "$work/first.out" || fail "first job did not finish: $(cat "$work/first.out")"
[ -e "$lock" ] && fail "the lock outlived its job"
ls "$dir" | grep -q "tmp-" && fail "temporaries left behind: $(ls "$dir")"

# --- a lock whose holder is gone (this host, dead pid) ----------------------------------------------------
sh -c 'exit 0' &
dead=$!
wait "$dead"
printf 'host=%s\npid=%s\nslurm_job_id=\nstarted=2026-01-01T00:00:00Z\n' "$(hostname)" "$dead" >"$lock"
out="$(train --set steps=2 --set checkpoint.every=1)"
[ $? -eq 0 ] || fail "stale lock not taken over: $out"
echo "$out" | grep -qF "took over the lock of checkpoint directory $dir from a job that is gone (host $(hostname), pid $dead" ||
  fail "no take-over message: $out"

# --- a lock of this very Slurm job (requeued after a node failure) -----------------------------------------
printf 'host=failed-node\npid=1\nslurm_job_id=4711\nstarted=2026-01-01T00:00:00Z\n' >"$lock"
out="$(SLURM_JOB_ID=4711 train --set steps=4 --set checkpoint.every=1)"
[ $? -eq 0 ] || fail "this job's own lock not taken over: $out"
# ... and another job's lock on another host is not.
printf 'host=failed-node\npid=1\nslurm_job_id=4711\nstarted=2026-01-01T00:00:00Z\n' >"$lock"
out="$(SLURM_JOB_ID=5000 train --set steps=6 --set checkpoint.every=1)"
[ $? -eq 1 ] || fail "another job's lock was taken: $out"
echo "$out" | grep -qF "(host failed-node, pid 1, SLURM job 4711, since 2026-01-01T00:00:00Z" || fail "holder not named: $out"
finish "checkpoint directory lock"
