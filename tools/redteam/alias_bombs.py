"""Campaign: YAML alias bombs (issue 28) through `sluice train`, `plan` and `submit --dry-run`.

Each probe nests anchors d levels deep, each level w aliases of the one below (w**d nodes once expanded), and puts
the bomb either under a key no config has (invalid whatever its size) or as the value of a layer list entry's
unknown key, or uses ordinary aliases (a layer map reused) that must keep working. A probe must end within
PROBE_TIMEOUT_S: parse time may not grow with the expansion."""
import campaigns
import config_mutations
import outcome

PROBE_TIMEOUT_S = 20


def bomb_text(depth, width):
    lines = ["bomb0: &a0 [1, 2, 3]"]
    for level in range(1, depth + 1):
        lines.append(f"bomb{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * width) + "]")
    return lines


def make_config(ctx, rng, index):
    """Returns (path, invalid, description)."""
    base = config_mutations.emit(config_mutations.BASE)
    style = rng.choice(["top-level", "inside-data", "ordinary"])
    depth, width = rng.randint(1, 14), rng.randint(2, 9)
    if style == "ordinary":
        text = base.replace("model:\n", "x-layer: &layer {type: gelu}\nmodel:\n", 1) if rng.random() < 0.5 else base
        text = text.replace("{type: gelu}, ", "*layer, ", 1) if "&layer" in text else text
        # A top-level x-layer key is unknown (refused); without it the config is the valid base.
        invalid, description = "&layer" in text, "ordinary alias" + (" under x-layer" if "&layer" in text else "")
    else:
        bomb = bomb_text(depth, width)
        anchors = "anchors:\n" + "".join("  " + line + "\n" for line in bomb)
        text = anchors + base
        if style == "inside-data":
            text = text.replace("data:\n", f"data:\n  extra: *a{depth}\n", 1)
        invalid, description = True, f"alias bomb depth {depth} width {width} ({width ** depth:.3g} nodes), {style}"
    path = ctx.path(f"alias_{index}.yaml")
    with open(path, "w") as out:
        out.write(text)
    return path, invalid, description


def run_aliases(ctx, count):
    row = outcome.CampaignRow("alias bombs (train, plan, submit)")
    for index in range(count):
        path, invalid, description = make_config(ctx, ctx.rng, index)
        command = ctx.rng.choice(["train", "plan", "submit"])
        cmd = [ctx.sluice, command, path]
        if command == "submit":
            cmd += ["--nodes", "1", "--dry-run", "--set", "checkpoint.dir=" + ctx.path("alias_checkpoints")]
        result = outcome.run(cmd, PROBE_TIMEOUT_S, env=ctx.env(), cwd=ctx.work,
                             memory_limit_bytes=campaigns.MEMORY_LIMIT)
        bad = result.timed_out or result.crashed() or (result.rc == 0 and invalid)
        kept = campaigns.keep_copy(ctx, path, f"alias_{index}.yaml") if bad else None
        campaigns.judge(row, result, invalid, f"{command}: {description}", kept)
    return row
