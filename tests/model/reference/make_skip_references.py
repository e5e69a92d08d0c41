#!/usr/bin/env python3
"""Writes skip_references.txt: a small U-Net-like model with skip connections (concat and add, one layer read twice)
as PyTorch computes it: forward and the gradients of L = sum(y * dy) for the input and every parameter.

Run once, by hand (CI only reads the file):  python3 tests/model/reference/make_skip_references.py

Same format as layer_references.txt (README.md), except that a case lists its model's layers, one `layer` line
each, and parameters are named by their layer as Sluice names them: layers.<index>.<name>.
"""

import os
import zlib

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)

LAYERS = [
    "{type: conv, channels: 4, kernel: 3, padding: periodic, name: e1}",
    "{type: gelu}",
    "{type: conv, channels: 4, kernel: 3, padding: zeros}",
    "{type: tanh}",
    "{type: concat, from: e1}",
    "{type: conv, channels: 4, kernel: 3, padding: reflect}",
    "{type: add, from: e1}",
    "{type: gelu, name: g}",
    "{type: conv, channels: 2, kernel: 1}",
    "{type: concat, from: g}",
    "{type: conv, channels: 3, kernel: 1}",
]
CONVS = {0: (2, 4, 3, "circular"), 2: (4, 4, 3, "constant"), 5: (8, 4, 3, "reflect"), 8: (4, 2, 1, None),
         10: (6, 3, 1, None)}


def conv(x, w, b, pad_mode):
    if pad_mode is not None:
        x = F.pad(x, (1, 1, 1, 1), mode=pad_mode)
    return F.conv2d(x, w, b)


def model(x, p):
    e1 = conv(x, *p[0], CONVS[0][3])
    h = torch.tanh(conv(F.gelu(e1, approximate="tanh"), *p[2], CONVS[2][3]))
    h = torch.cat([h, e1], dim=1)
    h = conv(h, *p[5], CONVS[5][3]) + e1
    g = F.gelu(h, approximate="tanh")
    h = torch.cat([conv(g, *p[8], None), g], dim=1)
    return conv(h, *p[10], None)


def main():
    gen = torch.Generator()
    gen.manual_seed(zlib.crc32(b"unet_skips") & 0x7FFFFFFF)
    batch, shape = 3, (2, 6, 5)
    x = torch.randn((batch,) + shape, generator=gen).requires_grad_(True)
    params = {}
    for index, (cin, cout, k, _) in CONVS.items():
        bound = 1.0 / (cin * k * k) ** 0.5
        w = ((torch.rand((cout, cin, k, k), generator=gen) * 2 - 1) * bound).requires_grad_(True)
        b = ((torch.rand((cout,), generator=gen) * 2 - 1) * bound).requires_grad_(True)
        params[index] = (w, b)
    y = model(x, params)
    dy = torch.randint(-32, 32, y.shape, generator=gen).to(torch.float32).add(0.5).div(16.0)
    (y * dy).sum().backward()

    def line(name, t):
        return "tensor %s %d %s" % (name, t.numel(), " ".join("%.9g" % v for v in t.detach().reshape(-1).tolist()))

    out = ["# Sluice skip-connection references: PyTorch %s, float32 on the CPU." % torch.__version__,
           "# Regenerate from the repository root: python3 tests/model/reference/make_skip_references.py",
           "# Format: tests/model/reference/README.md (one 'layer' line per layer). Generated; do not edit by hand.",
           "", "case unet_skips"]
    out += ["layer " + l for l in LAYERS]
    out += ["input " + " ".join(str(e) for e in shape), "batch %d" % batch, line("x", x)]
    for index, (w, b) in params.items():
        out += [line("layers.%d.weight" % index, w), line("layers.%d.bias" % index, b)]
    out += [line("y", y), line("dy", dy), line("dx", x.grad)]
    for index, (w, b) in params.items():
        out += [line("layers.%d.weight_grad" % index, w.grad), line("layers.%d.bias_grad" % index, b.grad)]
    out.append("end")
    with open(os.path.join(HERE, "skip_references.txt"), "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
