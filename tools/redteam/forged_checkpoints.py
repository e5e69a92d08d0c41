"""Campaign: checkpoints whose values are impossible but whose checksums all verify (issue 28: NaN/Inf weights and
NaN or negative optimizer moments loaded silently, and the inference model then predicted NaN with status OK).
forge_checkpoint.py plants one such value (it needs h5py: --h5py-python names an interpreter that has it). Each
forged file goes through `sluice train --resume` and the inference model (api_probe's concurrent mode loads it with
sluice_model_load and predicts); both must refuse it naming the dataset, except that the inference model never reads
/optimizer, so a forged moment it loads past is counted as harmless (a resume must refuse it). `sluice inspect` only describes a file, so
it is not asked to refuse."""
import os

import campaigns
import outcome

PROBE_TIMEOUT_S = 60


def make_source(ctx):
    """A checkpoint with model, Adam moments and normalization statistics."""
    return campaigns.make_checkpoint(ctx, "forge", normalization={"inputs": "auto", "targets": "auto"})


def run_forged(ctx, count, h5py_python, probe):
    row = outcome.CampaignRow("forged, checksummed checkpoints (resume, model load)")
    config, source = make_source(ctx)
    here = os.path.dirname(os.path.abspath(__file__))
    for index in range(count):
        forged = ctx.path(f"forged_{index}.h5")
        made = outcome.run([h5py_python, os.path.join(here, "forge_checkpoint.py"), source, forged, str(index)], 60)
        if made.rc != 0:
            raise RuntimeError("forge_checkpoint.py failed: " + made.stderr[-400:])
        planted = made.stdout.strip()
        if index % 2 == 0:
            cmd = [ctx.sluice, "train", config, "--resume", forged, "--set", "steps=6", "--set", "checkpoint.dir="]
            what = "resume"
        else:
            cmd = [probe, "concurrent", forged, "1", "1", str(index)]
            what = "sluice_model_load + predict"
        result = outcome.run(cmd, PROBE_TIMEOUT_S, env=ctx.env(), cwd=ctx.work)
        # The inference model reads /model and /normalization only: a forged optimizer moment is a value it never
        # uses (counted as harmless, like corrupted bytes in unused space); a resume must refuse it.
        unused = (lambda: planted.startswith("/optimizer/")) if what != "resume" else None
        bad = (result.rc == 0 and not (unused and unused())) or result.crashed() or result.timed_out
        kept = campaigns.keep_copy(ctx, forged, f"forged_{index}.h5") if bad else None
        campaigns.judge(row, result, True, f"{what}: {planted}", kept, unchanged=unused)
        os.remove(forged)
    return row
