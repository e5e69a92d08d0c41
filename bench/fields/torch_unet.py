#!/usr/bin/env python3
"""The PyTorch side of the U-Net comparison (issue 27, "Benchmarks"): bench/fields/unet.yaml's model, split, loss,
optimizer and batch, trained with torch.distributed.pipelining on gloo (2 processes x 1 thread, each pinned to a
core) or eagerly in one process with N intra-op threads, and timed as bench/pipeline/torch_pipeline.py times its
MLP (a barrier before each step, the step ends after the optimizer, the slowest rank's time; median over the timed
steps).

    python bench/fields/torch_unet.py --ranks 2 --schedule 1f1b --steps 10 --warmup 3
    python bench/fields/torch_unet.py --ranks 1 --threads 2 --steps 10 --warmup 3     # eager, no pipeline

Model (unet.yaml, layer indices in brackets): 2 x 64 x 64 input;
  encoder  [0-1] conv 3x3 16 circular + GELU(tanh) = level1, [2] MaxPool 2, [3-4] conv 32 + GELU = level2,
           [5] MaxPool 2, [6-7] conv 64 + GELU;
  decoder  [8] Upsample 2 nearest, [9] cat(., level2), [10-11] conv 32 + GELU,
           [12] Upsample 2, [13] cat(., level1), [14-15] conv 16 + GELU, [16] conv 1x1 2.
Split as unet.yaml's `split: [12, 5]`: stage 0 = layers 0-11, returning (x, level1); stage 1 = layers 12-16, so the
level-1 skip crosses the stages as a second activation. Loss: MSE, mean over all elements (Sluice's `mse` on
fields); AdamW lr 1e-3, no weight decay; batch 32 in M = 8 micro-batches (pipelined: PyTorch divides each
micro-batch's gradient by M; eager: the micro-batch losses are divided by M and accumulated).

Prints `torch_unet mode <pipeline-1f1b|eager-Nt> median_ms X min_ms Y steps S` and `rss rank R maxrss_kb K` per rank
(peak resident set of the process, getrusage) on rank 0; bench/fields/side_by_side.sh parses both.
"""
import argparse
import os
import resource
import socket
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

SCHEDULES = {"gpipe": "ScheduleGPipe", "1f1b": "Schedule1F1B"}


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, default=2, choices=[1, 2], help="2 = pipelined, 1 = eager")
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads per process")
    parser.add_argument("--schedule", default="1f1b", choices=sorted(SCHEDULES))
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--microbatches", type=int, default=8)
    parser.add_argument("--size", type=int, default=64, help="grid points per side")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps")
    parser.add_argument("--steps", type=int, default=10, help="timed steps (median)")
    parser.add_argument("--no-bind", action="store_true", help="do not pin pipeline rank r to core r")
    args = parser.parse_args(argv)
    if args.batch % args.microbatches != 0:
        parser.error(f"--batch {args.batch} is not a multiple of --microbatches {args.microbatches}")
    return args


def conv(cin, cout, k=3):
    return nn.Conv2d(cin, cout, k, padding=k // 2, padding_mode="circular" if k > 1 else "zeros")


class Stage0(nn.Module):
    """Layers 0-11: the encoder and the first decoder level; returns (x, level1)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(100)
        self.c0, self.c3, self.c6, self.c10 = conv(2, 16), conv(16, 32), conv(32, 64), conv(96, 32)
        self.act = nn.GELU(approximate="tanh")
        self.pool = nn.MaxPool2d(2)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")

    def forward(self, x):
        level1 = self.act(self.c0(x))
        level2 = self.act(self.c3(self.pool(level1)))
        x = self.act(self.c6(self.pool(level2)))
        x = torch.cat([self.up(x), level2], dim=1)
        x = self.act(self.c10(x))
        return x, level1


class Stage1(nn.Module):
    """Layers 12-16: the last decoder level and the 1x1 output convolution."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(200)
        self.c14, self.c16 = conv(48, 16), conv(16, 2, k=1)
        self.act = nn.GELU(approximate="tanh")
        self.up = nn.Upsample(scale_factor=2, mode="nearest")

    def forward(self, x, level1):
        x = torch.cat([self.up(x), level1], dim=1)
        return self.c16(self.act(self.c14(x)))


class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.s0, self.s1 = Stage0(), Stage1()

    def forward(self, x):
        return self.s1(*self.s0(x))


def make_batch(args):
    generator = torch.Generator().manual_seed(7)
    shape = (args.batch, 2, args.size, args.size)
    return torch.randn(*shape, generator=generator), torch.randn(*shape, generator=generator)


def mse(output, target):  # mean over all elements of the micro-batch
    return (output - target).pow(2).mean()


def maxrss_kb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def report(mode, times):
    print(f"torch_unet mode {mode} median_ms {1e3 * statistics.median(times):.2f} min_ms {1e3 * min(times):.2f} "
          f"steps {len(times)}", flush=True)


def pipelined(rank, args, port):
    try:
        pipelined_rank(rank, args, port)
    except Exception:  # mp.spawn shows only the first failing rank's error, often the peer's lost connection
        import traceback
        print(f"rank {rank}: {traceback.format_exc()}", file=sys.stderr, flush=True)
        raise


def pipelined_rank(rank, args, port):
    from torch.distributed import pipelining

    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(args.threads)
    if not args.no_bind and hasattr(os, "sched_setaffinity"):
        cores = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cores[rank % len(cores)]})
    dist.init_process_group("gloo", rank=rank, world_size=2)
    try:
        inputs, targets = make_batch(args)
        module = Stage0() if rank == 0 else Stage1()
        # Shapes given, not inferred: the inference records the strides its meta run produced, and gloo refuses
        # the non-contiguous gradient buffers made from them ("input tensor has to be contiguous").
        rows, n = args.batch // args.microbatches, args.size
        between = (torch.empty(rows, 32, n // 2, n // 2, requires_grad=True),
                   torch.empty(rows, 16, n, n, requires_grad=True))
        ends = torch.empty(rows, 2, n, n)
        stage = pipelining.PipelineStage(module, rank, 2, torch.device("cpu"),
                                         input_args=ends if rank == 0 else between,
                                         output_args=between if rank == 0 else ends)
        schedule = getattr(pipelining, SCHEDULES[args.schedule])(stage, args.microbatches, loss_fn=mse)
        optimizer = torch.optim.AdamW(module.parameters(), lr=1e-3, weight_decay=0.0)
        times = []
        for step in range(args.warmup + args.steps):
            dist.barrier()
            t0 = time.perf_counter()
            if rank == 0:
                schedule.step(inputs)
            else:
                schedule.step(target=targets, losses=[])
            optimizer.step()
            optimizer.zero_grad(set_to_none=False)
            value = torch.tensor([time.perf_counter() - t0], dtype=torch.float64)
            dist.all_reduce(value, op=dist.ReduceOp.MAX)
            if step >= args.warmup:
                times.append(value.item())
        rss = torch.tensor([maxrss_kb()], dtype=torch.float64)
        gathered = [torch.zeros(1, dtype=torch.float64) for _ in range(2)]
        dist.all_gather(gathered, rss)
        if rank == 0:
            report(f"pipeline-{args.schedule}", times)
            for r, value in enumerate(gathered):
                print(f"rss rank {r} maxrss_kb {int(value.item())}", flush=True)
    finally:
        dist.destroy_process_group()


def eager(args):
    torch.set_num_threads(args.threads)
    inputs, targets = make_batch(args)
    model = UNet()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0)
    rows = args.batch // args.microbatches
    times = []
    for step in range(args.warmup + args.steps):
        t0 = time.perf_counter()
        for x, y in zip(inputs.split(rows), targets.split(rows)):
            (mse(model(x), y) / args.microbatches).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)
        if step >= args.warmup:
            times.append(time.perf_counter() - t0)
    report(f"eager-{args.threads}t", times)
    print(f"rss rank 0 maxrss_kb {maxrss_kb()}", flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv):
    args = parse_args(argv)
    print(f"torch {torch.__version__}; {args.ranks} rank(s) x {args.threads} thread(s); U-Net 3 levels 16-64 "
          f"channels, {args.size}x{args.size}, batch {args.batch}, M={args.microbatches}; warm-up {args.warmup}, "
          f"median of {args.steps}", flush=True)
    if args.ranks == 1:
        eager(args)
    else:
        mp.spawn(pipelined, args=(args, free_port()), nprocs=2, join=True)


if __name__ == "__main__":
    main(sys.argv[1:])
