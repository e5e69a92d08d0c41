#!/usr/bin/env python3
"""The PyTorch side of the pipeline comparison (issue 17): the model, split, loss, optimizer and batch of Sluice's
pipeline_bench, trained with torch.distributed.pipelining on gloo, one thread per rank, and timed the same way
(a barrier before each step, the step ends after the optimizer, the slowest rank's time, median over the timed
steps, schedules round-robin one step each per round so load changes hit all of them alike).

    python bench/pipeline/torch_pipeline.py --schedules gpipe 1f1b interleaved zb-v --steps 15 --warmup 3
    python bench/pipeline/torch_pipeline.py --ranks 1 --threads 2     # one process, the whole model

Model: width -> layers x (Linear width + GELU), MSE summed over features and averaged over the batch (Sluice's
`loss: mse`), AdamW (lr 1e-4, no weight decay, as Sluice's `optimizer: {type: adamw}` defaults), global batch 256 in
M = 8 micro-batches. Split: equal layers per stage (Sluice's balanced partition of equal layers is the same);
interleaved puts stages r and r + p on rank r, zb-v stages r and 2p - 1 - r (the V).

With --ranks 1 there is no pipeline: one process runs the whole model over the M micro-batches (gradients
accumulated) and the optimizer, with --threads intra-op threads: the single-process side of item 4 (one rank with
two BLAS threads against two ranks with one each).

Prints one line per schedule, `schedule <name> median_ms <x> min_ms <y> steps <n>`, on rank 0 (side_by_side.sh
parses it). Needs PyTorch 2.4 or later (torch.distributed.pipelining with ScheduleZBVZeroBubble for zb-v).
"""
import argparse
import os
import socket
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

# Sluice's schedule names -> (PyTorch schedule class name, stages per rank). interleaved-zb (PyTorch's looped
# zero-bubble schedule, V = 2) has no Sluice counterpart: it is there for reference.
SCHEDULES = {
    "gpipe": ("ScheduleGPipe", 1),
    "1f1b": ("Schedule1F1B", 1),
    "interleaved": ("ScheduleInterleaved1F1B", 2),
    "interleaved-zb": ("ScheduleInterleavedZeroBubble", 2),
    "zb-v": ("ScheduleZBVZeroBubble", 2),
}


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--schedules", nargs="+", default=["gpipe", "1f1b", "interleaved", "zb-v"],
                        choices=sorted(SCHEDULES), help="schedules to time (ignored with --ranks 1)")
    parser.add_argument("--ranks", type=int, default=2, help="pipeline ranks (processes); 1 = no pipeline")
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads per process")
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--layers", type=int, default=8, help="Linear+GELU pairs")
    parser.add_argument("--batch", type=int, default=256, help="global batch rows per step")
    parser.add_argument("--microbatches", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps per schedule")
    parser.add_argument("--steps", type=int, default=15, help="timed steps per schedule (median)")
    parser.add_argument("--no-bind", action="store_true",
                        help="do not pin rank r to core r (pipeline_bench runs under mpirun --bind-to core)")
    args = parser.parse_args(argv)
    if args.ranks < 1 or args.threads < 1:
        parser.error("--ranks and --threads must be at least 1")
    if args.batch % args.microbatches != 0:
        parser.error(f"--batch {args.batch} is not a multiple of --microbatches {args.microbatches}")
    return args


def make_layers(args, first, count):
    """`count` Linear+GELU pairs starting at global pair `first`, each seeded by its index so every schedule
    (and every split) starts from the same weights."""
    layers = []
    for i in range(first, first + count):
        torch.manual_seed(1000 + i)
        layers += [nn.Linear(args.width, args.width), nn.GELU()]
    return nn.Sequential(*layers)


def make_batch(args):
    generator = torch.Generator().manual_seed(7)
    inputs = torch.randn(args.batch, args.width, generator=generator)
    targets = torch.randn(args.batch, args.width, generator=generator)
    return inputs, targets


def stage_indices(name, rank, ranks):
    """Global stage indices on `rank`: r (one per rank), r and r + p (interleaved), r and 2p - 1 - r (the V)."""
    per_rank = SCHEDULES[name][1]
    if per_rank == 1:
        return [rank]
    if name == "zb-v":
        return [rank, 2 * ranks - 1 - rank]
    return [rank, rank + ranks]


def pair_counts(args, stages):
    if args.layers % stages != 0:
        raise SystemExit(f"--layers {args.layers} does not split equally over {stages} stages")
    return args.layers // stages


class ScheduleRun:
    """One schedule's stages, optimizer and step on this rank."""

    def __init__(self, name, args, rank, ranks):
        from torch.distributed import pipelining

        class_name, per_rank = SCHEDULES[name]
        schedule_class = getattr(pipelining, class_name, None)
        if schedule_class is None:
            raise SystemExit(f"this PyTorch ({torch.__version__}) has no {class_name} for schedule {name}")
        stages = ranks * per_rank
        pairs = pair_counts(args, stages)
        mb_rows = args.batch // args.microbatches
        self.name = name
        self.indices = stage_indices(name, rank, ranks)
        self.holds_first = 0 in self.indices
        self.holds_last = stages - 1 in self.indices
        modules = [make_layers(args, i * pairs, pairs) for i in self.indices]
        # Shapes are inferred by the first (warm-up) step.
        pipeline_stages = [pipelining.PipelineStage(m, i, stages, torch.device("cpu"))
                           for m, i in zip(modules, self.indices)]
        parameters = [p for m in modules for p in m.parameters()]
        self.optimizer = torch.optim.AdamW(parameters, lr=1e-4, weight_decay=0.0)

        # Sluice's mse: squared error summed over features, averaged over the batch. PyTorch divides each
        # micro-batch's loss by M (scale_grads), so the micro-batch loss is its sum over its own rows.
        def loss_fn(output, target):
            return (output - target).pow(2).sum() / mb_rows

        stage_argument = pipeline_stages[0] if per_rank == 1 else pipeline_stages
        self.schedule = schedule_class(stage_argument, args.microbatches, loss_fn=loss_fn)

    def step(self, inputs, targets):
        positional = (inputs,) if self.holds_first else ()
        keywords = {"target": targets, "losses": []} if self.holds_last else {}
        self.schedule.step(*positional, return_outputs=False, **keywords)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=False)


def slowest(seconds):
    value = torch.tensor([seconds], dtype=torch.float64)
    dist.all_reduce(value, op=dist.ReduceOp.MAX)
    return value.item()


def pin(rank, args):
    if args.no_bind or not hasattr(os, "sched_setaffinity"):
        return
    cores = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cores[rank % len(cores)]})


def report(name, times):
    print(f"schedule {name} median_ms {1e3 * statistics.median(times):.2f} min_ms {1e3 * min(times):.2f} "
          f"steps {len(times)}", flush=True)


def pipelined(rank, args, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(args.threads)
    pin(rank, args)
    dist.init_process_group("gloo", rank=rank, world_size=args.ranks)
    try:
        inputs, targets = make_batch(args)
        runs = [ScheduleRun(name, args, rank, args.ranks) for name in args.schedules]
        times = {name: [] for name in args.schedules}
        for round_index in range(args.warmup + args.steps):
            for run in runs:
                dist.barrier()  # a common start, as the Sluice trainer's pipeline barrier
                t0 = time.perf_counter()
                run.step(inputs, targets)
                seconds = slowest(time.perf_counter() - t0)
                if round_index >= args.warmup:
                    times[run.name].append(seconds)
        if rank == 0:
            for name in args.schedules:
                report(name, times[name])
    finally:
        dist.destroy_process_group()


def single_process(args):
    """The whole model in one process over the M micro-batches: Sluice's sequential step."""
    torch.set_num_threads(args.threads)
    inputs, targets = make_batch(args)
    model = make_layers(args, 0, args.layers)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.0)
    mb_rows = args.batch // args.microbatches
    times = []
    for round_index in range(args.warmup + args.steps):
        t0 = time.perf_counter()
        for x, y in zip(inputs.split(mb_rows), targets.split(mb_rows)):
            ((model(x) - y).pow(2).sum() / args.batch).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)
        if round_index >= args.warmup:
            times.append(time.perf_counter() - t0)
    report(f"single-process-{args.threads}t", times)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv):
    args = parse_args(argv)
    print(f"torch {torch.__version__}; {args.ranks} rank(s) x {args.threads} thread(s); {args.layers} x (Linear "
          f"{args.width} + GELU), batch {args.batch}, M={args.microbatches}, MSE, AdamW; warm-up {args.warmup}, "
          f"median of {args.steps}", flush=True)
    if args.ranks == 1:
        single_process(args)
    else:
        mp.spawn(pipelined, args=(args, free_port()), nprocs=args.ranks, join=True)


if __name__ == "__main__":
    main(sys.argv[1:])
