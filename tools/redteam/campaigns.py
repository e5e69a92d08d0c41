"""The four red-team campaigns: configs, checkpoints, data files, faults. Each returns an outcome.CampaignRow."""
import copy
import dataclasses
import glob
import os
import shutil
import subprocess

import config_mutations
import file_corruption
import outcome
from faults import run_faults  # noqa: F401  (re-exported for redteam.py)
from outcome import load_average, print_table  # noqa: F401

PROBE_TIMEOUT_S = 60
MEMORY_LIMIT = 8 << 30  # an allocation the size checks miss fails here instead of swapping the machine


@dataclasses.dataclass
class Context:
    sluice: str
    work: str
    keep: str
    rng: object

    def env(self):
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OPENBLAS_NUM_THREADS="1", TMPDIR=self.work, OMPI_MCA_btl_vader_backing_directory=self.work)
        return env

    def path(self, name):
        return os.path.join(self.work, name)


def mpirun(np):
    return ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(np), "--mca", "btl", "self,vader"]


def judge(row, result, invalid, description, keep_file=None, unchanged=None):
    """Adds one probe's outcome to row. unchanged() is asked only when a corrupted input was accepted."""
    row.tried += 1
    if result.timed_out:
        row.hangs += 1
        row.note("hang", description, result, keep_file)
    elif result.crashed():
        row.crashes += 1
        row.note("crash", description, result, keep_file)
    elif result.rc == 0 and invalid:
        if unchanged is not None and unchanged():
            row.harmless += 1
        else:
            row.silent += 1
            row.note("silent acceptance", description, result, keep_file)
    elif result.rc == 0:
        row.accepted += 1
    elif result.clear_error():
        row.refused_clearly += 1
    else:
        row.refused_unclearly += 1
        row.note("refused without a message", description, result, keep_file)


def keep_copy(ctx, source, name):
    target = os.path.join(ctx.keep, name)
    shutil.copyfile(source, target)
    return target


def run_configs(ctx, count, share_on_4_ranks):
    row = outcome.CampaignRow("configs")
    for index in range(count):
        mutation = config_mutations.random_mutation(ctx.rng)
        config = ctx.path("mutated.yaml")
        with open(config, "w") as out:
            out.write(mutation.text)
        cmd = [ctx.sluice, "train", config]
        if ctx.rng.random() < share_on_4_ranks:
            cmd = mpirun(4) + cmd + ["--set", "pipeline.stages=4"]
            mutation.description += " (4 ranks)"
        for item in mutation.overrides:
            cmd += ["--set", item]
        result = outcome.run(cmd, PROBE_TIMEOUT_S, env=ctx.env(), cwd=ctx.work, memory_limit_bytes=MEMORY_LIMIT)
        bad = result.timed_out or result.crashed() or (result.rc == 0 and mutation.invalid)
        kept = keep_copy(ctx, config, f"config_{index}.yaml") if bad else None
        judge(row, result, mutation.invalid, mutation.description, kept)
    return row


def base_config(ctx, name, **changes):
    tree = copy.deepcopy(config_mutations.BASE)
    for dotted, value in changes.items():
        config_mutations.set_path(tree, tuple(dotted.split("__")), value)
    path = ctx.path(name)
    with open(path, "w") as out:
        out.write(config_mutations.emit(tree))
    return path


def make_checkpoint(ctx, name="ckpt", **changes):
    """Trains the base config (with `changes`) and returns (config, its latest checkpoint)."""
    directory = ctx.path(name + "_source")
    config = base_config(ctx, name + ".yaml", checkpoint__dir=directory, checkpoint__every=2, **changes)
    result = outcome.run([ctx.sluice, "train", config], PROBE_TIMEOUT_S, env=ctx.env(), cwd=ctx.work)
    files = sorted(glob.glob(os.path.join(directory, "*.h5")))
    if result.rc != 0 or not files:
        raise RuntimeError(f"could not make the {name} checkpoint: {result.first_error_line()}")
    return config, files[-1]


def run_checkpoints(ctx, count):
    row = outcome.CampaignRow("checkpoints (inspect + resume)")
    config, original = make_checkpoint(ctx)
    with open(original, "rb") as f:
        pristine = f.read()
    for index in range(count):
        damaged_bytes, description = file_corruption.corrupt(pristine, ctx.rng)
        damaged = ctx.path(f"damaged_{index}.h5")
        with open(damaged, "wb") as out:
            out.write(damaged_bytes)
        probes = [([ctx.sluice, "inspect", damaged], "inspect"),
                  ([ctx.sluice, "train", config, "--resume", damaged, "--set", "steps=3",
                    "--set", "checkpoint.dir="], "resume")]
        for cmd, what in probes:
            result = outcome.run(cmd, PROBE_TIMEOUT_S, env=ctx.env(), cwd=ctx.work, memory_limit_bytes=MEMORY_LIMIT)
            kept = keep_copy(ctx, damaged, f"checkpoint_{index}.h5") if result.rc == 0 or result.crashed() else None
            judge(row, result, True, f"{what}: {description}", kept,
                  unchanged=lambda: file_corruption.unchanged(original, damaged))
        os.remove(damaged)
    return row


def make_data_file(ctx, rows=256):
    """inputs (rows x 32) and targets (rows x 8), float32, written by Debian's h5import (no Python HDF5 needed)."""
    args = []
    for name, features in (("inputs", 32), ("targets", 8)):
        text, conf = ctx.path(f"{name}.txt"), ctx.path(f"{name}.conf")
        with open(text, "w") as out:
            for r in range(rows):
                out.write(" ".join(f"{((r * 31 + c * 7) % 97) / 97.0:.6f}" for c in range(features)) + "\n")
        with open(conf, "w") as out:
            out.write(f"PATH {name}\nINPUT-CLASS TEXTFP\nINPUT-SIZE 32\nRANK 2\nDIMENSION-SIZES {rows} {features}\n"
                      "OUTPUT-CLASS FP\nOUTPUT-SIZE 32\nOUTPUT-ARCHITECTURE IEEE\nOUTPUT-BYTE-ORDER LE\n")
        args += [text, "-c", conf]
    path = ctx.path("data.h5")
    subprocess.run(["h5import"] + args + ["-o", path], check=True, capture_output=True)
    return path


def run_datafiles(ctx, count):
    """Data files carry no checksum: changed values are valid data. Only crashes, hangs and unclear refusals count."""
    row = outcome.CampaignRow("data files (train)")
    with open(make_data_file(ctx), "rb") as f:
        pristine = f.read()
    damaged = ctx.path("damaged_data.h5")
    config = base_config(ctx, "data.yaml", data={"type": "hdf5", "path": damaged, "inputs": "inputs",
                                                 "targets": "targets", "batch": 16})
    for index in range(count):
        damaged_bytes, description = file_corruption.corrupt(pristine, ctx.rng)
        with open(damaged, "wb") as out:
            out.write(damaged_bytes)
        result = outcome.run([ctx.sluice, "train", config], PROBE_TIMEOUT_S, env=ctx.env(), cwd=ctx.work,
                             memory_limit_bytes=MEMORY_LIMIT)
        kept = keep_copy(ctx, damaged, f"data_{index}.h5") if result.timed_out or result.crashed() else None
        judge(row, result, False, description, kept)
    return row
