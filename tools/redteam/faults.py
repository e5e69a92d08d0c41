"""Faults injected into a 4-rank `sluice train` with periodic checkpoints, launched the way docs/SLURM.md says
(tools/sluice_mpirun.sh): kill -9, SIGSTOP or SIGTERM of one rank, SIGTERM of the launcher, kill -9 of mpirun.
Every run must end within its bound, and the checkpoint directory's latest file must verify. A SIGTERM (to a rank
or to the launcher) must end in exit 75, the requeue status, with a checkpoint of that step."""
import glob
import os
import signal
import subprocess
import time

import outcome

FAULTS = ["kill9_rank", "stop_rank", "term_rank", "term_launcher", "kill9_mpirun"]
# comm.timeout (10 s) + twice mpirun's 30 s grace after a non-zero exit (tools/sluice_mpirun.sh) + start-up + a save
RUN_BOUND_S = 150
FIRST_SAVE_BOUND_S = 60
# The shipped launcher (docs/SLURM.md "With mpirun"): SIGTERM to it becomes the preemption signal for the ranks.
LAUNCHER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sluice_mpirun.sh")


def children(pid):
    found = []
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.split("/")[2]))
    return found


def start_run(ctx, directory):
    from campaigns import base_config, mpirun
    config = base_config(ctx, "faults.yaml", steps=100000, checkpoint__dir=directory, checkpoint__every=5,
                         pipeline__stages=4, data__batch=64)
    cmd = [LAUNCHER] + mpirun(4)[1:] + [ctx.sluice, "train", config, "--set", "comm.timeout=10"]
    log = open(os.path.join(directory, "..", os.path.basename(directory) + ".log"), "w")
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=ctx.env(), cwd=ctx.work,
                            preexec_fn=os.setsid), log.name


def wait_first_save(directory):
    deadline = time.time() + FIRST_SAVE_BOUND_S
    while time.time() < deadline:
        if glob.glob(os.path.join(directory, "*.h5")):
            return True
        time.sleep(0.2)
    return False


def mpirun_pid(proc):
    """mpirun among the launcher's descendants (the launcher runs it from a subshell, in a session of its own)."""
    pending = children(proc.pid)
    while pending:
        pid = pending.pop()
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() == "mpirun":
                    return pid
        except OSError:
            continue
        pending += children(pid)
    return None


def inject(proc, fault, rng):
    mpirun = mpirun_pid(proc)
    ranks = children(mpirun) if mpirun else []
    if fault.endswith("_rank") and not ranks:
        return "no rank process found"
    victim = rng.choice(ranks) if ranks else None
    sig = {"kill9_rank": signal.SIGKILL, "stop_rank": signal.SIGSTOP, "term_rank": signal.SIGTERM,
           "term_launcher": signal.SIGTERM, "kill9_mpirun": signal.SIGKILL}[fault]
    target = {"term_launcher": proc.pid, "kill9_mpirun": mpirun}.get(fault, victim)
    os.kill(target, sig)
    return f"{fault} (pid {target})"


def where_live_ranks_wait(proc):
    """Names the library a live rank of a hung run waits in (gdb's backtrace), e.g. parallel HDF5 inside a save,
    which docs/WAITING.md lists as not bounded."""
    mpirun = mpirun_pid(proc)
    for pid in children(mpirun) if mpirun else []:
        with open(f"/proc/{pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "T":
                continue
        trace = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread 1", "-ex", "bt 30"],
                               capture_output=True, text=True, errors="replace").stdout
        if "H5F" in trace or "H5AC" in trace or "MPI_File" in trace:
            return "live rank waits inside parallel HDF5 / MPI-IO of a checkpoint save or load"
        frames = [line.split(" in ")[-1][:60] for line in trace.splitlines() if line.startswith("#")]
        return "live rank waits in " + " < ".join(frames[:4])
    return "no live rank left"


def cleanup(proc):
    """Nothing of a trial may survive it: stopped ranks are continued and the whole group killed."""
    mpirun = mpirun_pid(proc)
    for pid in (children(mpirun) if mpirun else []) + ([mpirun] if mpirun else []) + [proc.pid]:
        for sig in (signal.SIGCONT, signal.SIGKILL):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
    outcome.kill_group(proc.pid)


def latest_verifies(ctx, directory):
    files = sorted(glob.glob(os.path.join(directory, "*.h5")), key=os.path.getmtime)
    if not files:
        return False
    return outcome.run([ctx.sluice, "inspect", files[-1]], 60, env=ctx.env()).rc == 0


def one_trial(ctx, row, index, fault):
    directory = ctx.path(f"fault_{index}")
    os.makedirs(directory)
    proc, log = start_run(ctx, directory)
    try:
        if not wait_first_save(directory):
            row.note("no first checkpoint within bound", fault)
            return
        time.sleep(ctx.rng.random())
        what = inject(proc, fault, ctx.rng)
        try:
            rc = proc.wait(timeout=RUN_BOUND_S)
        except subprocess.TimeoutExpired:
            row.tried += 1
            row.hangs += 1
            row.note("hang", what + f" ({where_live_ranks_wait(proc)}) [log: {log}]")
            return
    finally:
        cleanup(proc)
    judge_trial(ctx, row, fault, what, rc, directory, log)


def judge_trial(ctx, row, fault, what, rc, directory, log):
    row.tried += 1
    with open(log, errors="replace") as f:
        text = f.read()
    verified = latest_verifies(ctx, directory)
    if not verified:
        row.lost_checkpoints += 1
        row.note("no verifying checkpoint", what)
    if any(marker in text for marker in outcome.CRASH_MARKERS):
        row.crashes += 1
        row.note("crash marker in log", what + f" [log: {log}]")
    expected_75 = fault in ("term_rank", "term_launcher")
    if expected_75 and rc != 75:
        row.refused_unclearly += 1
        row.note(f"exit {rc}, expected 75", what)
    else:
        row.refused_clearly += 1
    row.notes.append(f"outcome: {what}: exit {rc}, latest checkpoint {'verifies' if verified else 'MISSING'}")


def run_faults(ctx, count):
    """Columns reused: 'refused, clear message' = ended as the signal rules say; 'no message' = wrong status."""
    row = outcome.CampaignRow("faults (4 ranks)")
    for index in range(count):
        one_trial(ctx, row, index, FAULTS[index % len(FAULTS)])
    return row
