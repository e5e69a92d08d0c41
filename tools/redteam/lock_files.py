"""Campaign: what `<checkpoint.dir>/.sluice.lock` may be (issue 28). Anything but a regular file (a FIFO, a directory,
a socket, a device, a symlink to one of them or nowhere, a symlink loop) must be refused naming the lock, at once; a
regular file left by a process that is gone is a stale lock and is taken over (valid)."""
import os
import socket
import subprocess

import campaigns
import outcome

PROBE_TIMEOUT_S = 30
KINDS = ["fifo", "directory", "socket", "symlink-fifo", "symlink-directory", "symlink-dev-zero", "symlink-dev-null",
         "dangling-symlink", "symlink-loop", "directory-with-files", "unattributable-empty", "unattributable-garbage",
         "stale-dead-pid"]


def plant(kind, lock, rng):
    """Creates the lock; returns whether a run must refuse it."""
    target = lock + ".target"
    if kind == "fifo" or kind == "symlink-fifo":
        os.mkfifo(target if kind.startswith("symlink") else lock)
    if kind in ("directory", "directory-with-files", "symlink-directory"):
        os.makedirs(target if kind.startswith("symlink") else lock)
        if kind == "directory-with-files":
            open(os.path.join(lock, "x"), "w").close()
    if kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind(lock)  # left bound and unaccepted: a connect-less open of it must not block
    if kind.startswith("symlink-") and kind not in ("symlink-loop",):
        pointee = {"symlink-dev-zero": "/dev/zero", "symlink-dev-null": "/dev/null"}.get(kind, target)
        os.symlink(pointee, lock)
    if kind == "dangling-symlink":
        os.symlink(lock + ".nowhere", lock)
    if kind == "symlink-loop":
        os.symlink(lock + ".b", lock)
        os.symlink(lock, lock + ".b")
    if kind.startswith("unattributable"):
        with open(lock, "wb") as out:
            out.write(b"" if kind.endswith("empty") else bytes(rng.randrange(256) for _ in range(rng.randrange(1, 4096))))
    if kind == "stale-dead-pid":
        gone = subprocess.Popen(["true"])
        gone.wait()
        with open(lock, "w") as out:
            out.write(f"host={socket.gethostname()}\npid={gone.pid}\nslurm_job_id=\nstarted=2026-01-01T00:00:00Z\n")
    return kind != "stale-dead-pid"


def run_lock_files(ctx, count):
    row = outcome.CampaignRow("lock-file types (train)")
    config = campaigns.base_config(ctx, "lock.yaml")
    for index in range(count):
        kind = KINDS[index % len(KINDS)]
        directory = ctx.path(f"lock_{index}")
        os.makedirs(directory)
        invalid = plant(kind, os.path.join(directory, ".sluice.lock"), ctx.rng)
        ranks = ctx.rng.choice([1, 1, 2])
        cmd = [ctx.sluice, "train", config, "--set", f"checkpoint.dir={directory}", "--set", "checkpoint.every=1"]
        if ranks == 2:
            cmd = campaigns.mpirun(2) + cmd + ["--set", "pipeline.stages=2"]
        result = outcome.run(cmd, PROBE_TIMEOUT_S, env=ctx.env(), cwd=ctx.work)
        lock_named = ".sluice.lock" in result.stderr
        if result.rc > 0 and invalid and not lock_named:
            row.tried += 1
            row.refused_unclearly += 1
            row.note("refused without naming the lock", f"{kind} ({ranks} ranks)", result)
            continue
        campaigns.judge(row, result, invalid, f"{kind} ({ranks} ranks)")
    return row
