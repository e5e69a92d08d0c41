"""Campaign: long and odd option values for `sluice submit --dry-run` (issue 28: a 30,000-character value overflowed
std::regex's stack). Values up to 130,000 characters (the kernel's limit for one argument) in every option that takes text; a value holding a newline
would inject a directive into the sbatch script, and a --time that is not [D-]HH:MM:SS is malformed: both are
invalid by construction and must be refused."""
import math
import re
import string

import campaigns
import outcome

PROBE_TIMEOUT_S = 20
OPTIONS = ["--sbatch-option", "--job-name", "--partition", "--account", "--output-dir", "--time", "--set"]
ALPHABETS = {"letters": string.ascii_letters, "digits": string.digits, "colons": "0123456789:-",
             "punctuation": "=,.:;_/-+@%", "unicode": "éü✓λ中", "shell": "$`\"'\\!*?;&|<>(){}[] "}


def make_value(rng):
    # Linux caps one argument at 128 KiB (MAX_ARG_STRLEN): the longest value a shell can hand over.
    length = rng.choice([1, 100, 4096, 30000, 100000, 130000, rng.randrange(1, 130000)])
    alphabet = rng.choice(list(ALPHABETS))
    value = "".join(rng.choice(ALPHABETS[alphabet]) for _ in range(min(length, 2000)))
    value = (value * (length // max(1, len(value)) + 1))[:length]
    while len(value.encode()) > 131000:
        value = value[: len(value) * 9 // 10]
    newline = rng.random() < 0.15
    if newline:
        cut = rng.randrange(len(value) + 1)
        value = value[:cut] + "\n#SBATCH --x=y\n" + value[cut:]
    return value, f"{length} chars of {alphabet}" + (" with a newline" if newline else ""), newline


def finite_number(text):
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def run_long_options(ctx, count):
    row = outcome.CampaignRow("long option values (submit)")
    # submit refuses a config without checkpoint.dir (a Slurm job must survive preemption): give it one.
    config = campaigns.base_config(ctx, "submit.yaml", checkpoint__dir=ctx.path("submit_checkpoints"))
    for index in range(count):
        option = OPTIONS[index % len(OPTIONS)]
        value, description, newline = make_value(ctx.rng)
        if option == "--set":
            value = "optimizer.lr=" + value
        invalid = newline or (option == "--set" and not finite_number(value.split("=", 1)[1]))
        if option == "--time":
            invalid = invalid or not re.fullmatch(r"(\d+-)?\d{1,2}:\d{2}:\d{2}", value)
        cmd = [ctx.sluice, "submit", config, "--nodes", "1", "--dry-run", option, value]
        result = outcome.run(cmd, PROBE_TIMEOUT_S, env=ctx.env(), cwd=ctx.work,
                             memory_limit_bytes=campaigns.MEMORY_LIMIT)
        campaigns.judge(row, result, invalid, f"{option}: {description}")
    return row
