#!/usr/bin/env bash
# mpirun for runs that must survive being stopped: SIGTERM or SIGINT sent to this script reaches the ranks as
# the preemption warning, so they checkpoint at the next step boundary and exit 75, and so does this script.
#
#   tools/sluice_mpirun.sh [MPIRUN OPTIONS...] -np N sluice train CONFIG --auto-resume
#
# Why not mpirun alone (Open MPI 4.1, measured; docs/SLURM.md "With mpirun"): on SIGTERM or SIGINT, mpirun
# sends the ranks SIGCONT, sleeps odls_base_sigkill_timeout seconds, then SIGTERM, sleeps again, then SIGKILL,
# and exits 1 whatever the ranks did. Its sleeps block its event loop, so it stops reading the ranks' output: a
# rank that prints (one line per step) fills the pipe and blocks, never reaches its checkpoint, and is killed.
# SIGUSR1, by contrast, mpirun forwards to every rank at once and keeps running; a rank's exit status 75 is
# then mpirun's own. So this script turns SIGTERM/SIGINT into SIGUSR1 for mpirun, and a second SIGTERM/SIGINT
# into SIGKILL for the ranks mpirun started on this node (a stop at once, without a checkpoint; mpirun then ends
# the job itself, on the other nodes too). Never a signal to mpirun itself: after forwarding the first one,
# Open MPI 4.1's mpirun segfaults on a SIGTERM (exit 139, issue 28). Further signals repeat the SIGKILL.
#
# It also sets the grace period odls_base_sigkill_timeout (default 30 s, like Slurm's KillWait; an
# OMPI_MCA_odls_base_sigkill_timeout already in the environment wins): when a signal reaches the ranks
# directly and one of them exits, mpirun stops the others with that SIGCONT/SIGTERM/SIGKILL sequence, and
# 1 s would kill a rank still writing its checkpoint. The price: after any non-zero exit (75 included) mpirun
# waits twice that period before it returns.
#
# A stop with 75 ends at once and without Open MPI's abort banner: mpirun would take a rank's 75 as a failure,
# print "Per user-direction, the job has been aborted." and return only after twice odls_base_sigkill_timeout
# (its kill sequence sleeps even when every rank has already exited). So each rank runs under the fork agent
# sluice-mpirun-rank (`--mca orte_fork_agent`, PREFIX/libexec/sluice/ beside an installed copy of this script, or
# $SLUICE_MPIRUN_RANK_AGENT), which turns the rank's 75 into 0 and a file in a status directory; this script
# exits 75 when mpirun ended with 0 and a rank left such a file. The directory is made in the working directory
# (where mpirun also starts the ranks on other nodes, so a shared one sees them all), else under TMPDIR.
#
# SIGINT comes from Ctrl-C in a terminal. A script that starts this launcher in the background (`&`, no job
# control) starts it with SIGINT ignored, which bash cannot undo: send SIGTERM there.
#
# Exit status: mpirun's, i.e. the ranks' (75 = stopped with a checkpoint: run the same command to resume; after
# a second signal 1, unless the ranks had already exited 0 or 75).
set -u
if [ $# -eq 0 ]; then
  echo "usage: $0 [MPIRUN OPTIONS...] -np N PROGRAM ARGS..." >&2
  exit 2
fi
export OMPI_MCA_odls_base_sigkill_timeout="${OMPI_MCA_odls_base_sigkill_timeout:-30}"

status_file="$(mktemp "${TMPDIR:-/tmp}/sluice-mpirun-status.XXXXXX")" ||
  { echo "$0: cannot create a temporary file in ${TMPDIR:-/tmp}" >&2; exit 1; }
stops_dir=""
trap 'rm -f "$status_file"; [ -z "$stops_dir" ] || rm -rf "$stops_dir"' EXIT

# The fork agent: named by the environment, installed beside this script, or built in this source tree.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
agent="${SLUICE_MPIRUN_RANK_AGENT:-}"
for candidate in "$here/../libexec/sluice/sluice-mpirun-rank" "$here/../bazel-bin/tools/sluice-mpirun-rank"; do
  [ -n "$agent" ] || [ ! -x "$candidate" ] || agent="$(cd "$(dirname "$candidate")" && pwd)/sluice-mpirun-rank"
done
agent_options=()
if [ -n "$agent" ]; then
  stops_dir="$(mktemp -d "$PWD/.sluice-mpirun.XXXXXX" 2>/dev/null || mktemp -d "${TMPDIR:-/tmp}/sluice-mpirun.XXXXXX")" ||
    { echo "$0: cannot create a status directory in $PWD or ${TMPDIR:-/tmp}" >&2; exit 1; }
  export SLUICE_MPIRUN_STATUS_DIR="$stops_dir"
  agent_options=(-x SLUICE_MPIRUN_STATUS_DIR --mca orte_fork_agent "$agent")
else
  echo "sluice_mpirun: no sluice-mpirun-rank found (install Sluice, or bazel build //tools:sluice-mpirun-rank):" \
    "a stop with 75 will take mpirun twice odls_base_sigkill_timeout and print its abort banner" >&2
fi
launcher_pid=""
stops_asked=0
# mpirun is the recording subshell's only child.
ask_ranks_to_stop() {
  stops_asked=$((stops_asked + 1))
  [ -n "$launcher_pid" ] || return 0
  if [ "$stops_asked" -eq 1 ]; then
    echo "sluice_mpirun: $1 received: asking the ranks to checkpoint and stop (again to stop at once)" >&2
    pkill -USR1 -P "$launcher_pid"
  else
    echo "sluice_mpirun: $1 received again: stopping the ranks at once (SIGKILL), without a checkpoint" >&2
    local mpirun_pid
    for mpirun_pid in $(pgrep -P "$launcher_pid"); do pkill -KILL -P "$mpirun_pid"; done
  fi
}
trap 'ask_ranks_to_stop SIGTERM' TERM
trap 'ask_ranks_to_stop SIGINT' INT
(
  # Ignored here (not trapped, so it stays ignored for nothing but this subshell: mpirun installs its own
  # handlers): a signal to the whole process group, such as Ctrl-C, must not end the subshell that records
  # mpirun's status. setsid keeps such a signal away from mpirun itself, which would otherwise abort the job.
  trap '' TERM INT
  setsid mpirun "${agent_options[@]}" "$@"
  echo "$?" > "$status_file"
) &
launcher_pid=$!

# A trapped signal makes `wait` return early while mpirun keeps running; bash's `wait` can also lose the status
# when the signal lands as mpirun ends, hence the file.
while kill -0 "$launcher_pid" 2>/dev/null; do
  wait "$launcher_pid"
done
status="$(cat "$status_file")"
if [ -z "$status" ]; then
  echo "sluice_mpirun: mpirun ended without recording its exit status (killed?)" >&2
  status=1
fi
# The ranks stopped with a checkpoint (their 75s were handed to mpirun as 0 by the fork agent).
if [ "$status" = 0 ] && [ -n "$stops_dir" ] && [ -n "$(ls -A "$stops_dir")" ]; then
  status=75
fi
# A stop at once is the documented 1 (mpirun's status for killed ranks is 137), unless the ranks had finished or
# written their checkpoint first.
if [ "$stops_asked" -ge 2 ] && [ "$status" != 0 ] && [ "$status" != 75 ]; then
  status=1
fi
exit "$status"
