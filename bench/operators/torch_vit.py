#!/usr/bin/env python3
"""The PyTorch side of issue 29's transformer benchmark: bench/operators/vit.yaml's model (8 pre-norm blocks, dim 256,
4 heads, mlp_ratio 4, 256 tokens), split (4 blocks per stage), loss, optimizer and batch, trained with
torch.distributed.pipelining on gloo (2 processes x 1 thread, each pinned to a core), timed as
bench/fields/torch_unet.py times its U-Net (a barrier before each step, the step ends after the optimizer, the
slowest rank's time; median over the timed steps).

    python bench/operators/torch_vit.py --steps 5 --warmup 2
    python bench/operators/torch_vit.py --attention explicit    # softmax(q k^T / sqrt(d)) v written out

Block: timm's `Block` with its defaults as Sluice's `transformer` layer has them (docs/LAYERS.md, "Tokens"):
x = x + proj(attn(norm1(x))), x = x + fc2(GELU_tanh(fc1(norm2(x)))), qkv with bias, LayerNorm eps 1e-5, attention
scale 1/sqrt(D/H), no dropout, no layer scale. Attention is timm's fused path by default
(F.scaled_dot_product_attention, what timm's Attention calls when fused_attn is on); --attention explicit computes
the same with a matmul, softmax and matmul, as Sluice's CPU kernel does. Tokens are timm's [N, T, D] (Sluice's are
[D, T] per sample, channel-first; the model is the same up to that transpose, which Sluice pays inside each block).
Loss: MSE, mean over all elements (Sluice's `mse` on fields); AdamW lr 1e-4, no weight decay; batch 32 in M = 8
micro-batches (PyTorch divides each micro-batch's gradient by M).

Prints the parameter count, then `torch_vit mode pipeline-1f1b median_ms X min_ms Y steps S` and
`rss rank R maxrss_kb K` per rank (getrusage) on rank 0; bench/operators/side_by_side.sh parses them.
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
import torch.nn.functional as F


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads per process")
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--blocks", type=int, default=8, help="blocks in all; half on each of the 2 stages")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--microbatches", type=int, default=8)
    parser.add_argument("--attention", default="fused", choices=["fused", "explicit"])
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps")
    parser.add_argument("--steps", type=int, default=5, help="timed steps (median)")
    parser.add_argument("--count", action="store_true", help="print the parameter count and stop")
    parser.add_argument("--no-bind", action="store_true", help="do not pin pipeline rank r to core r")
    args = parser.parse_args(argv)
    if args.batch % args.microbatches != 0:
        parser.error(f"--batch {args.batch} is not a multiple of --microbatches {args.microbatches}")
    if args.blocks % 2 != 0 or args.dim % args.heads != 0:
        parser.error("--blocks must be even and --heads must divide --dim")
    return args


class Attention(nn.Module):
    def __init__(self, dim, heads, fused):
        super().__init__()
        self.heads, self.fused = heads, fused
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        n, t, d = x.shape
        q, k, v = self.qkv(x).reshape(n, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
        if self.fused:
            x = F.scaled_dot_product_attention(q, k, v)
        else:
            x = ((q * self.scale) @ k.transpose(-2, -1)).softmax(dim=-1) @ v
        return self.proj(x.transpose(1, 2).reshape(n, t, d))


class Mlp(nn.Module):
    def __init__(self, dim, ratio=4):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(dim, ratio * dim), nn.GELU(approximate="tanh"), nn.Linear(ratio * dim, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, dim, heads, fused):
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(dim, eps=1e-5), Attention(dim, heads, fused)
        self.norm2, self.mlp = nn.LayerNorm(dim, eps=1e-5), Mlp(dim)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


def make_stage(args, stage):
    torch.manual_seed(100 + stage)
    per_stage = args.blocks // 2
    return nn.Sequential(*[Block(args.dim, args.heads, args.attention == "fused") for _ in range(per_stage)])


def parameter_count(args):
    return sum(p.numel() for s in range(2) for p in make_stage(args, s).parameters())


def make_batch(args):
    generator = torch.Generator().manual_seed(7)
    shape = (args.batch, args.tokens, args.dim)
    return torch.randn(*shape, generator=generator), torch.randn(*shape, generator=generator)


def mse(output, target):  # mean over all elements of the micro-batch
    return (output - target).pow(2).mean()


def maxrss_kb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


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
        module = make_stage(args, rank)
        # Shapes given, not inferred (as torch_unet.py: gloo wants contiguous buffers).
        rows = args.batch // args.microbatches
        between = torch.empty(rows, args.tokens, args.dim, requires_grad=True)
        ends = torch.empty(rows, args.tokens, args.dim)
        stage = pipelining.PipelineStage(module, rank, 2, torch.device("cpu"),
                                         input_args=ends if rank == 0 else between,
                                         output_args=between if rank == 0 else ends)
        schedule = pipelining.Schedule1F1B(stage, args.microbatches, loss_fn=mse)
        optimizer = torch.optim.AdamW(module.parameters(), lr=1e-4, weight_decay=0.0)
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
            print(f"torch_vit mode pipeline-1f1b median_ms {1e3 * statistics.median(times):.2f} "
                  f"min_ms {1e3 * min(times):.2f} steps {len(times)}", flush=True)
            for r, value in enumerate(gathered):
                print(f"rss rank {r} maxrss_kb {int(value.item())}", flush=True)
    finally:
        dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv):
    args = parse_args(argv)
    print(f"torch {torch.__version__}; 2 ranks x {args.threads} thread(s); {args.blocks} blocks dim {args.dim}, "
          f"{args.heads} heads, {args.tokens} tokens, {args.attention} attention, batch {args.batch}, "
          f"M={args.microbatches}, 1F1B; warm-up {args.warmup}, median of {args.steps}", flush=True)
    print(f"torch_vit parameters {parameter_count(args)}", flush=True)
    if args.count:
        return
    mp.spawn(pipelined, args=(args, free_port()), nprocs=2, join=True)


if __name__ == "__main__":
    main(sys.argv[1:])
