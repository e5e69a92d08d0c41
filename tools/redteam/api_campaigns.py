"""Campaigns on the C API, through api_probe.c built against an installed tree (--prefix, from
`bazel run //capi:install -- PREFIX`): concurrent sluice_model_predict on one model, and non-finite values handed
to every call that takes floats. api_probe's exit status is the verdict (see its header)."""
import os
import subprocess

import campaigns
import outcome

PROBE_TIMEOUT_S = 60
API_CONFIG = """model:
  inputs: 16
  layers:
    - {type: linear, outputs: 32}
    - {type: relu}
    - {type: layernorm}
    - {type: linear, outputs: 4}
pipeline: {stages: 1, microbatches: 4}
loss: mse
optimizer: {type: adamw, lr: 1.0e-3}
data: {type: external, batch: 8}
seed: 1
"""
ENTRIES = ["train_step.inputs", "train_step.targets", "evaluate.inputs", "evaluate.targets", "predict.inputs",
           "submit_samples.inputs", "submit_samples.targets", "set_layer_params", "set_learning_rate"]
VALUES = ["nan", "inf", "-inf"]


def build_probe(ctx, prefix):
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(ctx.env(), PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "sluice"], env=env, check=True,
                           capture_output=True, text=True).stdout.split()
    probe = ctx.path("api_probe")
    subprocess.run(["mpicc", "-O1", "-o", probe, os.path.join(here, "api_probe.c")] + flags + ["-lpthread", "-lm"],
                   env=env, check=True, capture_output=True)
    return probe


def verdict(row, result, description, expected_refusal):
    """api_probe's codes: 0 fine, 10 accepted, 11 state changed, 12 unusable, 13 threads differ, 2 no set-up."""
    row.tried += 1
    if result.timed_out:
        row.hangs += 1
        row.note("hang", description, result)
    elif result.crashed() or result.rc < 0:
        row.crashes += 1
        row.note("crash", description, result)
    elif result.rc == 0:
        if expected_refusal:
            row.refused_clearly += 1
        else:
            row.accepted += 1
    elif result.rc in (10, 11, 13):
        row.silent += 1
        row.note({10: "accepted", 11: "refused but state changed", 13: "outputs differ"}[result.rc], description,
                 result)
    else:
        row.refused_unclearly += 1
        row.note(f"probe exit {result.rc}", description, result)


def run_concurrent_model(ctx, count, probe, model):
    row = outcome.CampaignRow("concurrent sluice_model_predict")
    for index in range(count):
        threads, calls = ctx.rng.randint(2, 16), ctx.rng.randint(10, 200)
        cmd = [probe, "concurrent", model, str(threads), str(calls), str(ctx.rng.randrange(1 << 30))]
        result = outcome.run(cmd, PROBE_TIMEOUT_S, env=ctx.env(), cwd=ctx.work)
        verdict(row, result, f"{threads} threads x {calls} calls", expected_refusal=False)
    return row


def run_nonfinite_api(ctx, count, probe):
    row = outcome.CampaignRow("non-finite values, C API calls")
    config = ctx.path("api.yaml")
    with open(config, "w") as out:
        out.write(API_CONFIG)
    for index in range(count):
        entry, value = ENTRIES[index % len(ENTRIES)], ctx.rng.choice(VALUES)
        position = ctx.rng.randrange(1 << 20)
        cmd = [probe, "nonfinite", config, entry, str(position), value]
        result = outcome.run(cmd, PROBE_TIMEOUT_S, env=ctx.env(), cwd=ctx.work)
        verdict(row, result, f"{entry}[{position}] = {value}", expected_refusal=True)
    return row


def make_model(ctx):
    """A checkpoint of a small trained model for the concurrent campaign."""
    return campaigns.make_checkpoint(ctx, "model")[1]
