#!/usr/bin/env python3
"""The PyTorch side of the host-cores benchmark (bench/host_cores/run.py starts one process per rank): the model of
unbalanced.yaml (17 x Linear 256, 16 on rank 0 and 1 on rank 1), MSE summed over features and averaged over the
batch, AdamW lr 1e-4, batch 256 in 8 micro-batches, 1F1B (torch.distributed.pipelining.Schedule1F1B) over gloo,
one intra-op thread per rank, rank r pinned to core r (as mpirun --bind-to core pins Sluice's ranks).

    python torch_host_cores.py --rank R --port P --steps 40

Rank 0 prints `step K step_ms X` after every step (flushed), as `sluice train` does, so run.py samples both
ranks' CPU time at the same points for either side.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed import pipelining

WIDTH, LAYERS, FIRST_STAGE_LAYERS, BATCH, MICROBATCHES = 256, 17, 16, 256, 8


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--steps", type=int, default=40)
    args = parser.parse_args()
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(args.port)
    torch.set_num_threads(1)
    cores = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cores[args.rank % len(cores)]})
    dist.init_process_group("gloo", rank=args.rank, world_size=2)
    first, count = (0, FIRST_STAGE_LAYERS) if args.rank == 0 else (FIRST_STAGE_LAYERS, LAYERS - FIRST_STAGE_LAYERS)
    layers = []
    for i in range(first, first + count):
        torch.manual_seed(1000 + i)
        layers.append(nn.Linear(WIDTH, WIDTH))
    module = nn.Sequential(*layers)
    stage = pipelining.PipelineStage(module, args.rank, 2, torch.device("cpu"))
    mb_rows = BATCH // MICROBATCHES

    def loss_fn(output, target):
        return (output - target).pow(2).sum() / mb_rows

    schedule = pipelining.Schedule1F1B(stage, MICROBATCHES, loss_fn=loss_fn)
    optimizer = torch.optim.AdamW(module.parameters(), lr=1e-4, weight_decay=0.0)
    generator = torch.Generator().manual_seed(7)
    inputs = torch.randn(BATCH, WIDTH, generator=generator)
    targets = torch.randn(BATCH, WIDTH, generator=generator)
    try:
        for step in range(1, args.steps + 1):
            t0 = time.perf_counter()
            if args.rank == 0:
                schedule.step(inputs)
            else:
                schedule.step(target=targets, losses=[])
            optimizer.step()
            optimizer.zero_grad(set_to_none=False)
            if args.rank == 0:
                print(f"step {step} step_ms {1e3 * (time.perf_counter() - t0):.3f}", flush=True)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
