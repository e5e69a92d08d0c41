#!/usr/bin/env python3
"""The PyTorch side of issue 29's FNO benchmark: bench/operators/fno.yaml's model, loss, optimizer and batch, trained
eagerly in one process with N intra-op threads and timed as bench/fields/torch_unet.py times its eager row (the
step ends after the optimizer; median over the timed steps).

    python bench/operators/torch_fno.py --threads 1 --steps 5 --warmup 2

Model: the FNO paper's FNO2d (Li et al., fourier_2d.py) with Sluice's layers' choices: 3 x 64 x 64 input,
lift = 1x1 conv 3 -> 32; 4 x fno_block = GELU_tanh(SpectralConv2d(x) + Conv2d(32, 32, 1)(x)) with 12 x 12 modes
(rfft2, the modes [:12, :12] and [-12:, :12] mixed by complex einsum "bixy,ioxy->boxy", irfft2); projection 1x1 conv
32 -> 128, GELU_tanh, 1x1 conv 128 -> 1. (The paper's last Fourier layer has no GELU and its lift and projection are
nn.Linear on channel-last tensors; Sluice's fno_block always applies GELU, and a 1x1 conv is the same map.)
Loss: MSE, mean over all elements; AdamW lr 1e-3, no weight decay; batch 32 as one micro-batch.

Prints the parameter count (complex weights counted as 2 real values each, as Sluice stores them), then
`torch_fno mode eager-Nt median_ms X min_ms Y steps S` and `rss rank 0 maxrss_kb K`.
"""
import argparse
import resource
import statistics
import sys
import time

import torch
import torch.nn as nn


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    parser.add_argument("--width", type=int, default=32)
    parser.add_argument("--modes", type=int, default=12)
    parser.add_argument("--blocks", type=int, default=4)
    parser.add_argument("--size", type=int, default=64, help="grid points per side")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps")
    parser.add_argument("--steps", type=int, default=5, help="timed steps (median)")
    parser.add_argument("--count", action="store_true", help="print the parameter count and stop")
    return parser.parse_args(argv)


class SpectralConv2d(nn.Module):
    """The FNO paper's SpectralConv2d."""

    def __init__(self, cin, cout, m1, m2):
        super().__init__()
        self.m1, self.m2 = m1, m2
        scale = 1 / (cin * cout)
        self.weights1 = nn.Parameter(scale * torch.rand(cin, cout, m1, m2, dtype=torch.cfloat))
        self.weights2 = nn.Parameter(scale * torch.rand(cin, cout, m1, m2, dtype=torch.cfloat))
        self.cout = cout

    def forward(self, x):
        x_ft = torch.fft.rfft2(x)
        out_ft = torch.zeros(x.shape[0], self.cout, x.size(-2), x.size(-1) // 2 + 1, dtype=torch.cfloat)
        out_ft[:, :, :self.m1, :self.m2] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, :self.m1, :self.m2],
                                                        self.weights1)
        out_ft[:, :, -self.m1:, :self.m2] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, -self.m1:, :self.m2],
                                                         self.weights2)
        return torch.fft.irfft2(out_ft, s=(x.size(-2), x.size(-1)))


class FnoBlock(nn.Module):
    def __init__(self, width, modes):
        super().__init__()
        self.spectral = SpectralConv2d(width, width, modes, modes)
        self.pointwise = nn.Conv2d(width, width, 1)
        self.act = nn.GELU(approximate="tanh")

    def forward(self, x):
        return self.act(self.spectral(x) + self.pointwise(x))


def make_model(args):
    torch.manual_seed(100)
    return nn.Sequential(nn.Conv2d(3, args.width, 1), *[FnoBlock(args.width, args.modes) for _ in range(args.blocks)],
                         nn.Conv2d(args.width, 128, 1), nn.GELU(approximate="tanh"), nn.Conv2d(128, 1, 1))


def main(argv):
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}; 1 process x {args.threads} thread(s); FNO {args.blocks} blocks, width "
          f"{args.width}, {args.modes}x{args.modes} modes, {args.size}x{args.size}, batch {args.batch}; warm-up "
          f"{args.warmup}, median of {args.steps}", flush=True)
    model = make_model(args)
    count = sum(p.numel() * (2 if p.is_complex() else 1) for p in model.parameters())
    print(f"torch_fno parameters {count}", flush=True)
    if args.count:
        return
    generator = torch.Generator().manual_seed(7)
    inputs = torch.randn(args.batch, 3, args.size, args.size, generator=generator)
    targets = torch.randn(args.batch, 1, args.size, args.size, generator=generator)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0)
    times = []
    for step in range(args.warmup + args.steps):
        t0 = time.perf_counter()
        (model(inputs) - targets).pow(2).mean().backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)
        if step >= args.warmup:
            times.append(time.perf_counter() - t0)
    print(f"torch_fno mode eager-{args.threads}t median_ms {1e3 * statistics.median(times):.2f} "
          f"min_ms {1e3 * min(times):.2f} steps {len(times)}", flush=True)
    print(f"rss rank 0 maxrss_kb {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
