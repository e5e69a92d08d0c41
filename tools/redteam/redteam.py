#!/usr/bin/env python3
"""Adversarial pass over every input of the `sluice` command and the C API (issues 14 and 28, repeatable).

Campaigns, each counting crashes, hangs and silent acceptances:
  configs      mutated YAML configs and --set overrides through `sluice train` (1 rank; a share on 4 ranks)
  checkpoints  corrupted checkpoint files through `sluice inspect` and `sluice train --resume`
  datafiles    corrupted HDF5 data files through `sluice train` with data.type = hdf5
  faults       kill -9 / SIGSTOP / SIGTERM of one rank, SIGTERM of the launcher (tools/sluice_mpirun.sh), kill -9 of mpirun during a 4-rank run with checkpoints
  aliases      YAML alias bombs through train, plan and submit (alias_bombs.py)
  locks        every kind of file `.sluice.lock` can be (lock_files.py)
  options      long and odd `sluice submit` option values (long_options.py)
  diskfull     ENOSPC during saves, then MPI_Finalize (disk_full.py, a preloaded shim)
  concurrent   threads sharing one inference model (api_campaigns.py; needs --prefix)
  nonfinite    NaN/Inf in config keys, data files (nonfinite_inputs.py) and C API arrays and scalars (needs --prefix)
  forged       impossible values in checkpoints whose checksums verify (forged_checkpoints.py; needs --prefix and
               --h5py-python)

A *crash* is a death by signal or a crash marker on stderr (sanitizer report, std::terminate, "please report").
A *hang* is a run that outlives its bound. A *silent acceptance* is a run that succeeds on input that is
invalid by construction (an unknown or duplicate key, a second YAML document, a string where a number goes), or
on a corrupted file whose contents (h5dump of every dataset and attribute) differ from the original's. A
corrupted file whose contents are unchanged (the bytes hit unused space) is counted as harmless, not accepted.

Standard library only; needs h5dump/h5import (Debian's hdf5-tools) and an mpirun. Not a CI test: it takes
minutes and its figures go into the closing note. Usage (repository root, after `bazel build //tools/sluice`):
  python3 tools/redteam/redteam.py --sluice bazel-bin/tools/sluice/sluice --configs 640 --checkpoints 145 \
      --datafiles 139 --faults 20
Issue 28's campaigns against an installed tree (`bazel run //capi:install -- /tmp/rt-prefix`; h5py in a venv):
  python3 tools/redteam/redteam.py --prefix /tmp/rt-prefix --h5py-python /path/venv/bin/python \
      --campaigns aliases,locks,options,diskfull,concurrent,nonfinite,forged --cases 200
"""
import argparse
import json
import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import alias_bombs  # noqa: E402
import api_campaigns  # noqa: E402
import campaigns  # noqa: E402
import disk_full  # noqa: E402
import forged_checkpoints  # noqa: E402
import lock_files  # noqa: E402
import long_options  # noqa: E402
import nonfinite_inputs  # noqa: E402

ALL_CAMPAIGNS = "configs,checkpoints,datafiles,faults,aliases,locks,options,diskfull,concurrent,nonfinite,forged"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sluice", default="bazel-bin/tools/sluice/sluice")
    parser.add_argument("--configs", type=int, default=640)
    parser.add_argument("--checkpoints", type=int, default=145)
    parser.add_argument("--datafiles", type=int, default=139)
    parser.add_argument("--faults", type=int, default=20)
    parser.add_argument("--share-on-4-ranks", type=float, default=0.1,
                        help="fraction of mutated configs also run under mpirun -np 4")
    parser.add_argument("--cases", type=int, default=200, help="probes per issue-28 campaign (nonfinite: per half)")
    parser.add_argument("--campaigns", default=ALL_CAMPAIGNS, help="comma-separated subset of " + ALL_CAMPAIGNS)
    parser.add_argument("--prefix", help="installed Sluice tree (bin/sluice, lib/pkgconfig): the C API probes")
    parser.add_argument("--h5py-python", help="a Python interpreter with h5py, for forge_checkpoint.py")
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--keep", help="directory to keep the failing inputs in (default: a temporary one)")
    parser.add_argument("--json", help="also write the summary as JSON to this file")
    return parser.parse_args()


def campaign_runs(args, ctx):
    """(name, run) in the order they run; the C API probe is built on first use."""
    probe = {}

    def api_probe():
        if "path" not in probe:
            if not args.prefix:
                raise SystemExit("the concurrent, nonfinite and forged campaigns need --prefix (an installed tree)")
            probe["path"] = api_campaigns.build_probe(ctx, os.path.abspath(args.prefix))
        return probe["path"]

    def nonfinite(ctx):
        files = nonfinite_inputs.run_nonfinite_files(ctx, args.cases)
        return [files, api_campaigns.run_nonfinite_api(ctx, args.cases, api_probe())] if args.prefix else [files]

    return [
        ("configs", lambda ctx: campaigns.run_configs(ctx, args.configs, args.share_on_4_ranks)),
        ("checkpoints", lambda ctx: campaigns.run_checkpoints(ctx, args.checkpoints)),
        ("datafiles", lambda ctx: campaigns.run_datafiles(ctx, args.datafiles)),
        ("faults", lambda ctx: campaigns.run_faults(ctx, args.faults)),
        ("aliases", lambda ctx: alias_bombs.run_aliases(ctx, args.cases)),
        ("locks", lambda ctx: lock_files.run_lock_files(ctx, args.cases)),
        ("options", lambda ctx: long_options.run_long_options(ctx, args.cases)),
        ("diskfull", lambda ctx: disk_full.run_disk_full(ctx, args.cases)),
        ("concurrent", lambda ctx: api_campaigns.run_concurrent_model(ctx, args.cases, api_probe(),
                                                                      api_campaigns.make_model(ctx))),
        ("nonfinite", nonfinite),
        ("forged", lambda ctx: forged_checkpoints.run_forged(ctx, args.cases, args.h5py_python, api_probe())),
    ]


def main():
    args = parse_args()
    installed = args.prefix and args.sluice == "bazel-bin/tools/sluice/sluice"
    sluice = os.path.abspath(os.path.join(args.prefix, "bin", "sluice") if installed else args.sluice)
    rng = random.Random(args.seed)
    # A rank killed by the faults campaign may still be writing into it for a moment: cleanup must not fail the run.
    with tempfile.TemporaryDirectory(prefix="sluice-redteam.", ignore_cleanup_errors=True) as work:
        keep = os.path.abspath(args.keep) if args.keep else os.path.join(work, "findings")
        os.makedirs(keep, exist_ok=True)
        ctx = campaigns.Context(sluice=sluice, work=work, keep=keep, rng=rng)
        print(f"load average at start: {campaigns.load_average()}", flush=True)
        rows = [run(ctx) for name, run in campaign_runs(args, ctx) if name in args.campaigns.split(",")]
        rows = [r for row in rows for r in (row if isinstance(row, list) else [row])]
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
