"""Campaign: non-finite and impossible values where they enter through files (issue 28): every float key of a
config (in the file and through --set, in YAML's spellings of NaN and infinity and as overflowing literals) and
NaN/Inf samples in an HDF5 data file. Each probe is invalid by construction: it must be refused, naming the key or
the file, dataset and sample; a run that trains on it is a silent acceptance."""
import copy
import os
import subprocess

import campaigns
import config_mutations
import outcome

PROBE_TIMEOUT_S = 60
# Paths into config_mutations.BASE (model.layers indices: 2 is the dropout, 5 the layernorm).
FLOAT_KEYS = [("optimizer", "lr"), ("optimizer", "weight_decay"), ("optimizer", "clip_grad_norm"),
              ("optimizer", "eps"), ("optimizer", "beta1"), ("optimizer", "beta2"), ("model", "layers", 2, "p"),
              ("model", "layers", 5, "eps"), ("comm", "timeout"), ("comm", "arrival_timeout")]
SPELLINGS = [".nan", ".NaN", ".NAN", ".inf", "-.inf", "+.inf", ".Inf", "1e400", "-1e400", "!!float .nan",
             "!!float -.inf", "nan", "inf", "-inf", "NaN", "Infinity"]


def set_in(tree, path, value):
    node = tree
    for part in path[:-1]:
        node = node[part] if isinstance(part, int) else node.setdefault(part, {})
    node[path[-1]] = value


def run_config_value(ctx, index):
    path, spelling = FLOAT_KEYS[index % len(FLOAT_KEYS)], ctx.rng.choice(SPELLINGS)
    tree = copy.deepcopy(config_mutations.BASE)
    marker = "__VALUE__"
    set_in(tree, path, marker)
    text = config_mutations.emit(tree).replace(f'"{marker}"', spelling)
    config = ctx.path(f"nonfinite_{index}.yaml")
    with open(config, "w") as out:
        out.write(text)
    cmd = [ctx.sluice, "train", config]
    if ctx.rng.random() < 0.3 and all(isinstance(part, str) for part in path):
        dotted = ".".join(str(p) for p in path)
        with open(config, "w") as out:
            out.write(config_mutations.emit(config_mutations.BASE))
        cmd += ["--set", f"{dotted}={spelling}"]
    return outcome.run(cmd, PROBE_TIMEOUT_S, env=ctx.env(), cwd=ctx.work), f"{'.'.join(map(str, path))} = {spelling}"


def write_data_file(ctx, index, rows=64):
    """inputs [rows][32], targets [rows][8] with one non-finite value planted; returns (path, description)."""
    side, features = ctx.rng.choice([("inputs", 32), ("targets", 8)])
    row, column = ctx.rng.randrange(rows), ctx.rng.randrange(features)
    value = ctx.rng.choice(["nan", "inf", "-inf"])
    args = []
    for name, width in (("inputs", 32), ("targets", 8)):
        text, conf = ctx.path(f"nf_{name}.txt"), ctx.path(f"nf_{name}.conf")
        with open(text, "w") as out:
            for r in range(rows):
                cells = [f"{((r * 31 + c * 7) % 97) / 97.0:.6f}" for c in range(width)]
                if name == side and r == row:
                    cells[column] = value
                out.write(" ".join(cells) + "\n")
        with open(conf, "w") as out:
            out.write(f"PATH {name}\nINPUT-CLASS TEXTFP\nINPUT-SIZE 32\nRANK 2\nDIMENSION-SIZES {rows} {width}\n"
                      "OUTPUT-CLASS FP\nOUTPUT-SIZE 32\nOUTPUT-ARCHITECTURE IEEE\nOUTPUT-BYTE-ORDER LE\n")
        args += [text, "-c", conf]
    path = ctx.path(f"nonfinite_{index}.h5")
    subprocess.run(["h5import"] + args + ["-o", path], check=True, capture_output=True)
    return path, f"{side}[{row}][{column}] = {value}"


def run_data_value(ctx, index):
    path, description = write_data_file(ctx, index)
    config = campaigns.base_config(ctx, "nf_data.yaml", data={"type": "hdf5", "path": path, "inputs": "inputs",
                                                               "targets": "targets", "batch": 16})
    result = outcome.run([ctx.sluice, "train", config, "--set", "steps=4"], PROBE_TIMEOUT_S, env=ctx.env(),
                         cwd=ctx.work)
    os.remove(path)
    return result, "data file " + description


def run_nonfinite_files(ctx, count):
    row = outcome.CampaignRow("non-finite values, config keys and data files")
    for index in range(count):
        result, description = (run_config_value if index % 2 == 0 else run_data_value)(ctx, index)
        campaigns.judge(row, result, True, description)
    return row
