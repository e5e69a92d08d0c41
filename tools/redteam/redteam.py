#!/usr/bin/env python3
"""Adversarial pass over every input of the `sluice` command (issue 14's red-team, repeatable).

Four campaigns, each counting crashes, hangs and silent acceptances:
  configs      mutated YAML configs and --set overrides through `sluice train` (1 rank; a share on 4 ranks)
  checkpoints  corrupted checkpoint files through `sluice inspect` and `sluice train --resume`
  datafiles    corrupted HDF5 data files through `sluice train` with data.type = hdf5
  faults       kill -9 / SIGSTOP / SIGTERM of one rank, SIGTERM of the launcher (tools/sluice_mpirun.sh), kill -9 of mpirun during a 4-rank run with checkpoints

A *crash* is a death by signal or a crash marker on stderr (sanitizer report, std::terminate, "please report").
A *hang* is a run that outlives its bound. A *silent acceptance* is a run that succeeds on input that is
invalid by construction (an unknown or duplicate key, a second YAML document, a string where a number goes), or
on a corrupted file whose contents (h5dump of every dataset and attribute) differ from the original's. A
corrupted file whose contents are unchanged (the bytes hit unused space) is counted as harmless, not accepted.

Standard library only; needs h5dump/h5import (Debian's hdf5-tools) and an mpirun. Not a CI test: it takes
minutes and its figures go into the closing note. Usage (repository root, after `bazel build //tools/sluice`):
  python3 tools/redteam/redteam.py --sluice bazel-bin/tools/sluice/sluice --configs 640 --checkpoints 145 \
      --datafiles 139 --faults 20
"""
import argparse
import json
import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import campaigns  # noqa: E402


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sluice", default="bazel-bin/tools/sluice/sluice")
    parser.add_argument("--configs", type=int, default=640)
    parser.add_argument("--checkpoints", type=int, default=145)
    parser.add_argument("--datafiles", type=int, default=139)
    parser.add_argument("--faults", type=int, default=20)
    parser.add_argument("--share-on-4-ranks", type=float, default=0.1,
                        help="fraction of mutated configs also run under mpirun -np 4")
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--keep", help="directory to keep the failing inputs in (default: a temporary one)")
    parser.add_argument("--json", help="also write the summary as JSON to this file")
    return parser.parse_args()


def main():
    args = parse_args()
    sluice = os.path.abspath(args.sluice)
    rng = random.Random(args.seed)
    # A rank killed by the faults campaign may still be writing into it for a moment: cleanup must not fail the run.
    with tempfile.TemporaryDirectory(prefix="sluice-redteam.", ignore_cleanup_errors=True) as work:
        keep = os.path.abspath(args.keep) if args.keep else os.path.join(work, "findings")
        os.makedirs(keep, exist_ok=True)
        ctx = campaigns.Context(sluice=sluice, work=work, keep=keep, rng=rng)
        print(f"load average at start: {campaigns.load_average()}", flush=True)
        rows = [
            campaigns.run_configs(ctx, args.configs, args.share_on_4_ranks),
            campaigns.run_checkpoints(ctx, args.checkpoints),
            campaigns.run_datafiles(ctx, args.datafiles),
            campaigns.run_faults(ctx, args.faults),
        ]
        print(f"load average at end: {campaigns.load_average()}")
        campaigns.print_table(rows)
        if args.json:
            with open(args.json, "w") as out:
                json.dump([row.as_dict() for row in rows], out, indent=1)
        if args.keep:
            print(f"failing inputs kept in {keep}")
    bad = sum(row.crashes + row.hangs + row.silent for row in rows)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
