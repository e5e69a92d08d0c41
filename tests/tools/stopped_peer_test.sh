#!/bin/bash
# comm.timeout and comm.wait under `sluice train`, with real processes: one of 2 ranks is stopped (SIGSTOP) in the
# middle of a run; the other must exit non-zero within a few timeouts, its message naming the stopped rank, and
# while it waits it must sleep under comm.wait: block (CPU-seconds from /proc/PID/stat) and burn a core under
# spin (so the measurement can tell the difference, and the test can fail).
# Usage: stopped_peer_test.sh SLUICE CONFIG
set -u
SLUICE="$1"
CONFIG="$2"
source "$(dirname "$0")/cli_test_env.sh"
TIMEOUT=4
TICKS=$(getconf CLK_TCK)

# Utime + stime of PID in seconds.
cpu_of() { awk -v hz="$TICKS" '{printf "%.3f", ($14 + $15) / hz}' "/proc/$1/stat" 2>/dev/null || echo -1; }

# run POLICY STOPPED_RANK: trains until a rank is stopped; sets $code, $elapsed, $out and $cpu (CPU-seconds the
# live rank used in the 2.5 s after the stop, -1 if it could not be measured).
run() {
  local policy="$1" stopped="$2" log="$work/run.$1.$2"
  timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 --mca btl self,vader "$SLUICE" train "$CONFIG" \
    --set pipeline.stages=2 --set steps=1000000 --set comm.timeout=$TIMEOUT --set comm.wait="$policy" >"$log" 2>&1 &
  local launcher=$! mpirun_pid="" stopped_pid="" live_pid=""
  for _ in $(seq 100); do  # until both ranks are training (rank 0 prints step lines)
    grep -q "^step" "$log" 2>/dev/null && break
    sleep 0.1
  done
  sleep 1
  mpirun_pid="$(pgrep -P "$launcher" mpirun)"
  for pid in $(pgrep -P "$mpirun_pid"); do
    rank="$(tr '\0' '\n' <"/proc/$pid/environ" | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')"
    if [ "$rank" = "$stopped" ]; then stopped_pid=$pid; else live_pid=$pid; fi
  done
  [ -n "$stopped_pid" ] && [ -n "$live_pid" ] || fail "$policy: could not find the ranks' processes"
  kill -STOP "$stopped_pid"
  local t0 c0 c1
  t0=$(date +%s.%N)
  sleep 0.5
  c0=$(cpu_of "$live_pid")
  sleep 2.5
  c1=$(cpu_of "$live_pid")
  cpu=$(awk -v a="$c0" -v b="$c1" 'BEGIN { print (a < 0 || b < 0) ? -1 : b - a }')
  wait "$launcher"
  code=$?
  elapsed=$(awk -v t0="$t0" -v t1="$(date +%s.%N)" 'BEGIN { printf "%.1f", t1 - t0 }')
  kill -KILL "$stopped_pid" 2>/dev/null
  out="$(grep -v '^step' "$log")"
  echo "comm.wait=$policy, rank $stopped stopped: exit $code after $elapsed s; live rank used $cpu CPU-s in 2.5 s"
}

# --- rank 1 stopped, block: rank 0 names it, exits non-zero, and sleeps while it waits ----------------------
run block 1
[ "$code" -ne 0 ] || fail "block/rank 1: exit 0 after a stopped peer: $out"
[ "$code" -ne 124 ] || fail "block/rank 1: hung until the test's time limit: $out"
echo "$out" | grep -q "sluice train (rank 0): .*rank 1" || fail "block/rank 1: no message naming rank 1: $out"
awk -v e="$elapsed" -v t=$TIMEOUT 'BEGIN { exit !(e < 2 * t + 6) }' || fail "block/rank 1: took $elapsed s"
awk -v c="$cpu" 'BEGIN { exit !(c >= 0 && c < 0.3) }' || fail "block: waiting rank used $cpu CPU-s in 2.5 s"
block_cpu=$cpu

# --- rank 0 stopped (the agreement's decider): rank 1 names it ------------------------------------------------
run block 0
[ "$code" -ne 0 ] && [ "$code" -ne 124 ] || fail "block/rank 0: exit $code: $out"
echo "$out" | grep -q "sluice train (rank 1): .*rank 0" || fail "block/rank 0: no message naming rank 0: $out"
awk -v e="$elapsed" -v t=$TIMEOUT 'BEGIN { exit !(e < 4 * t + 6) }' || fail "block/rank 0: took $elapsed s"

# --- spin: the same wait keeps a core busy (what block avoids) ----------------------------------------------
run spin 1
[ "$code" -ne 0 ] && [ "$code" -ne 124 ] || fail "spin/rank 1: exit $code: $out"
# Loose on purpose: on a loaded CI machine a spinning process gets only its share of a core (0.3 CPU-s in 2.5 s at a
# load average of 16 on 2 cores), while a blocked one stays near zero whatever the load.
awk -v c="$cpu" -v b="$block_cpu" 'BEGIN { exit !(c > 0.2 && c > 2 * b) }' ||
  fail "spin: waiting rank used only $cpu CPU-s in 2.5 s (block: $block_cpu): the policies do not differ"

finish "stopped-peer"
