#!/usr/bin/env python3
"""Host-cores benchmark (issue 28): how much CPU each of 2 pipeline ranks burns per wall-second, and the step
time, when one rank holds 16 of 17 layers (unbalanced.yaml), for Sluice under each comm.wait and for PyTorch's
pipelining over gloo (torch_host_cores.py) as the reference level. The sides alternate within each round so that
load changes on the machine hit all of them alike.

    setsid python3 bench/host_cores/run.py --rounds 3 --steps 30 --warmup 6 --nice -19 \
        --python /work/torchvenv/bin/python

Per run: both ranks' utime + stime (/proc/PID/stat) are sampled when rank 0 prints the step line of step
`--warmup` and again at the last step; CPU-s per wall-s = their difference over the wall time between, step ms
= that wall time over the steps between. Needs bazel-bin/tools/sluice/sluice (build with -c opt) and Open MPI's
mpirun; ranks are bound to a core each (mpirun --bind-to core; the PyTorch ranks pin themselves).

Caution: the samples are taken when rank 0's step lines reach this script. On a machine where they arrive in bursts
(seen 2026-11-29: 31 lines within 0.2 s), its step times and CPU rates are wrong; rusage_diff.sh measures the same
from /usr/bin/time and the ranks' own step_ms, independently of when lines arrive.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime (fields 14 and 15)


def children_named(parent, name):
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                text = f.read()
        except OSError:
            continue
        comm = text[text.index("(") + 1:text.rindex(")")]
        ppid = int(text.rsplit(")", 1)[1].split()[1])
        if ppid == parent and comm == name:
            found.append(int(entry))
    return found


def world_rank(pid):
    with open(f"/proc/{pid}/environ", "rb") as f:
        for item in f.read().split(b"\0"):
            if item.startswith(b"OMPI_COMM_WORLD_RANK="):
                return int(item.split(b"=", 1)[1])
    return pid


def nice_prefix(args):
    return ["nice", "-n", str(args.nice)] if args.nice else []


def sluice_command(args, policy, work):
    return nice_prefix(args) + ["mpirun", "--allow-run-as-root", "-np", "2", "--bind-to", "core", "--mca", "btl", "self,vader",
            "-x", "OPENBLAS_NUM_THREADS=1", args.sluice, "train", os.path.join(HERE, "unbalanced.yaml"),
            "--set", f"steps={args.steps}", "--set", f"comm.wait={policy}"]


def measure(stdout_lines, rank_pids, args):
    """Reads rank 0's step lines; samples CPU at step --warmup and at the last step."""
    marks = {}
    for line in stdout_lines:
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "step" and parts[1].isdigit():
            step = int(parts[1])
            if step in (args.warmup, args.steps):
                pids = rank_pids()
                marks[step] = (time.monotonic(), [cpu_seconds(p) for p in pids])
            if step == args.steps:
                break
    (t0, c0), (t1, c1) = marks[args.warmup], marks[args.steps]
    wall = t1 - t0
    return {"step_ms": 1e3 * wall / (args.steps - args.warmup),
            "cpu_per_wall": [(b - a) / wall for a, b in zip(c0, c1)]}


def run_sluice(args, policy, work):
    env = dict(os.environ, TMPDIR=work, OMPI_MCA_orte_tmpdir_base=work, OMPI_MCA_btl_vader_backing_directory=work)
    proc = subprocess.Popen(sluice_command(args, policy, work), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=env)
    pids = []

    def rank_pids():
        if not pids:
            pids.extend(sorted(children_named(proc.pid, os.path.basename(args.sluice)[:15]), key=world_rank))
        return pids

    try:
        return measure(proc.stdout, rank_pids, args)
    finally:
        proc.stdout.read()
        proc.wait()


def run_torch(args, port):
    script = os.path.join(HERE, "torch_host_cores.py")
    procs = [subprocess.Popen(nice_prefix(args) + [args.python, script, "--rank", str(r), "--port", str(port), "--steps",
                               str(args.steps)], stdout=subprocess.PIPE if r == 0 else subprocess.DEVNULL,
                              text=True) for r in range(2)]
    try:
        return measure(procs[0].stdout, lambda: [p.pid for p in procs], args)
    finally:
        procs[0].stdout.read()
        for p in procs:
            p.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=8)
    parser.add_argument("--policies", nargs="+", default=["spin", "yield", "block", "auto"])
    parser.add_argument("--sluice", default="bazel-bin/tools/sluice/sluice")
    parser.add_argument("--python", default="", help="a Python with torch: adds the PyTorch/gloo side")
    parser.add_argument("--nice", type=int, default=0,
                        help="run every side at this niceness, and give this session's autogroup the same (e.g. "
                             "-19 as root, started under setsid: the benchmark then takes the cores from other "
                             "sessions' work on a shared machine, nearer a quiet one)")
    args = parser.parse_args()
    if not 0 < args.warmup < args.steps:
        parser.error("need 0 < --warmup < --steps")
    if args.nice:
        with open("/proc/self/autogroup", "w") as f:  # CFS shares CPU between sessions first, then by nice
            f.write(str(args.nice))
    sides = list(args.policies) + (["gloo"] if args.python else [])
    results = {s: [] for s in sides}
    print(f"load average at start: {open('/proc/loadavg').read().split()[:3]}; {os.cpu_count()} cores; "
          f"niceness {args.nice}; {args.steps} steps, sampled from step {args.warmup}", flush=True)
    print("round side step_ms cpu_per_wall_rank0 cpu_per_wall_rank1", flush=True)
    with tempfile.TemporaryDirectory(prefix="sl-cores.") as work:
        for round_index in range(1, args.rounds + 1):
            for side in sides:
                r = run_torch(args, 29500 + round_index) if side == "gloo" else run_sluice(args, side, work)
                results[side].append(r)
                print(f"{round_index} {side} {r['step_ms']:.1f} {r['cpu_per_wall'][0]:.2f} "
                      f"{r['cpu_per_wall'][1]:.2f}", flush=True)
    print(f"load average at end: {open('/proc/loadavg').read().split()[:3]}")
    print("median over rounds: side step_ms step/spin cpu_per_wall_rank0 cpu_per_wall_rank1")
    spin = statistics.median(r["step_ms"] for r in results["spin"]) if "spin" in results else None
    for side in sides:
        step = statistics.median(r["step_ms"] for r in results[side])
        ratio = f"{step / spin:.3f}" if spin else "-"
        print(f"{side} {step:.1f} {ratio} {statistics.median(r['cpu_per_wall'][0] for r in results[side]):.2f} "
              f"{statistics.median(r['cpu_per_wall'][1] for r in results[side]):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
