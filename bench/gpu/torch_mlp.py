#!/usr/bin/env python3
"""The MLP of mlp_step_bench.cc in PyTorch: Linear + GELU(tanh) layers, MSE loss, AdamW, bf16 autocast.

Same layers, hidden size, rows and step structure (zero the gradients, forward, loss, backward, one fused AdamW
update), so the two step times and peak memories compare. Prints one JSON object.
NOT YET RUN on a GPU: written without access to one.
"""
import argparse
import json
import time

import torch


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--rows", type=int, default=8192)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()

    device = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False  # bf16 autocast does the GEMMs; fp32 stays fp32
    layers = []
    for _ in range(args.layers):
        layers += [torch.nn.Linear(args.hidden, args.hidden), torch.nn.GELU(approximate="tanh")]
    model = torch.nn.Sequential(*layers).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
    inputs = torch.rand(args.rows, args.hidden, device=device) * 2 - 1
    target = torch.zeros(args.rows, args.hidden, device=device)

    def step():
        optimizer.zero_grad(set_to_none=False)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            output = model(inputs)
        loss = torch.nn.functional.mse_loss(output.float(), target)
        loss.backward()
        optimizer.step()

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    step()
    torch.cuda.synchronize()
    peak_bytes = torch.cuda.max_memory_allocated()
    start = time.perf_counter()
    for _ in range(args.repeats):
        step()
    torch.cuda.synchronize()
    seconds = (time.perf_counter() - start) / args.repeats
    print(json.dumps({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "layers": args.layers,
                      "hidden": args.hidden, "rows": args.rows, "precision": "bf16-autocast",
                      "step_seconds": round(seconds, 6), "peak_allocated_bytes": peak_bytes}))


if __name__ == "__main__":
    main()
