"""Campaign: the disk fills during a checkpoint save (issue 28: the error was reported, then MPI_Finalize died with
SIGSEGV inside HDF5's shutdown). A preloaded shim (enospc_shim.c, built here with cc) makes every write into a file
under the "full" directory fail with ENOSPC once the file would pass a byte budget drawn per probe, from 0 to
beyond a whole checkpoint. The run must end with a clear error or succeed, never crash or hang, and every
checkpoint file it leaves must verify (`sluice inspect`, run without the shim): a half-written file is lost data."""
import glob
import os
import subprocess

import campaigns
import outcome

PROBE_TIMEOUT_S = 60


def build_shim(ctx):
    here = os.path.dirname(os.path.abspath(__file__))
    shim = ctx.path("enospc_shim.so")
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", shim, os.path.join(here, "enospc_shim.c"), "-ldl"],
                   check=True, capture_output=True)
    return shim


def checkpoint_size(ctx, config):
    directory = ctx.path("full_size_probe")
    outcome.run([ctx.sluice, "train", config, "--set", f"checkpoint.dir={directory}"], PROBE_TIMEOUT_S,
                env=ctx.env(), cwd=ctx.work)
    files = glob.glob(os.path.join(directory, "*.h5"))
    return max((os.path.getsize(f) for f in files), default=200000)


def files_left_verify(ctx, directory):
    for path in glob.glob(os.path.join(directory, "*.h5")):
        if outcome.run([ctx.sluice, "inspect", path], 60, env=ctx.env()).rc != 0:
            return path
    return None


def run_disk_full(ctx, count):
    row = outcome.CampaignRow("disk full during saves (train, MPI_Finalize)")
    shim = build_shim(ctx)
    config = campaigns.base_config(ctx, "full.yaml", checkpoint__every=1, steps=3)
    size = checkpoint_size(ctx, config)
    for index in range(count):
        full = ctx.path(f"full_{index}")
        os.makedirs(full)
        budget = ctx.rng.randrange(0, 2 * size)
        env = dict(ctx.env(), LD_PRELOAD=shim, SLUICE_REDTEAM_FULL_DIR=full, SLUICE_REDTEAM_BUDGET=str(budget))
        cmd = [ctx.sluice, "train", config, "--set", f"checkpoint.dir={full}/ckpt"]
        ranks = ctx.rng.choice([1, 2])
        if ranks == 2:
            cmd = campaigns.mpirun(2)[:3] + ["-x", "LD_PRELOAD", "-x", "SLUICE_REDTEAM_FULL_DIR", "-x",
                                             "SLUICE_REDTEAM_BUDGET"] + campaigns.mpirun(2)[3:] + cmd
            cmd += ["--set", "pipeline.stages=2"]
        result = outcome.run(cmd, PROBE_TIMEOUT_S, env=env, cwd=ctx.work)
        description = f"budget {budget} of {size} bytes, {ranks} rank(s)"
        broken = files_left_verify(ctx, os.path.join(full, "ckpt"))
        if broken and not (result.timed_out or result.crashed()):
            row.tried += 1
            row.lost_checkpoints += 1
            row.note("a checkpoint left that does not verify", description + f": {broken}", result)
            continue
        campaigns.judge(row, result, False, description)
        if result.rc > 0 and "space" not in (result.stderr + result.stdout).lower():
            row.note("refused, but the message does not say the disk is full", description, result)
    return row
