#!/usr/bin/env python3
"""Writes loss_references.txt: loss: cross_entropy on rows and on fields, computed by PyTorch.

Run once, by hand, when a case is added (CI never runs PyTorch; it only reads the file):

    python3 tests/model/reference/make_loss_references.py            # from the repository root

Needs torch (any 2.x; CPU is enough). float32 on the CPU, one thread, deterministic algorithms; every case draws
from its own generator seeded from the case's name. The format is in README.md beside this file.

Each case: a per-sample output shape ([C] for rows, [C, D1[, D2[, D3]]] for a field), a batch N, random logits
[N, C, D..], targets of the same shape (class probabilities over the channels at every point: one-hot for class
indices, or soft labels), PyTorch's nn.CrossEntropyLoss (reduction='mean': over N·ΠD) and its gradient with respect
to the logits.
"""

import os
import sys
import zlib

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_PATH = os.path.join(HERE, "loss_references.txt")

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)
torch.set_default_dtype(torch.float32)


def make_generator(name):
    g = torch.Generator()
    g.manual_seed(zlib.crc32(name.encode()) & 0x7FFFFFFF)
    return g


CASES = []


def case(name, shape, batch, targets, logit_scale=1.0):
    CASES.append((name, list(shape), batch, targets, logit_scale))


# Rows, then fields in 1, 2 and 3 spatial dimensions; one-hot targets (class indices) and soft labels.
case("rows_onehot", [5], 4, "onehot")
case("rows_soft", [5], 3, "soft")
case("field1d_onehot", [3, 10], 2, "onehot")
case("field2d_onehot", [4, 4, 5], 3, "onehot")
case("field3d_onehot", [3, 2, 3, 4], 2, "onehot")
case("field1d_soft", [3, 10], 2, "soft")
case("field2d_soft", [4, 4, 5], 2, "soft")
case("field3d_soft", [2, 2, 3, 4], 2, "soft")
case("field2d_two_classes", [2, 3, 4], 2, "onehot")
# Logits of hundreds: the log-sum-exp must not overflow.
case("field2d_large_logits", [4, 3, 5], 2, "onehot", logit_scale=300.0)


def fmt(t):
    flat = t.detach().to(torch.float32).contiguous().reshape(-1).tolist()
    return f"{len(flat)} " + " ".join("%.9g" % v for v in flat)


def run_case(name, shape, batch, targets, logit_scale):
    g = make_generator(name)
    full = (batch,) + tuple(shape)
    c = shape[0]
    logits = (torch.randn(full, generator=g) * logit_scale).requires_grad_(True)
    index_shape = (batch,) + tuple(shape[1:])
    if targets == "onehot":
        index = torch.randint(0, c, index_shape, generator=g)
        target = F.one_hot(index, c).movedim(-1, 1).to(torch.float32)
    else:
        index = None
        target = torch.softmax(torch.randn(full, generator=g) * 2.0, dim=1)
    loss = torch.nn.CrossEntropyLoss(reduction="mean")(logits, target)
    loss.backward()
    if index is not None:
        # With class indices, PyTorch's other spelling gives the same loss and gradient.
        again = logits.detach().clone().requires_grad_(True)
        by_index = torch.nn.CrossEntropyLoss(reduction="mean")(again, index)
        by_index.backward()
        torch.testing.assert_close(by_index, loss, rtol=1e-6, atol=1e-7)
        torch.testing.assert_close(again.grad, logits.grad, rtol=1e-5, atol=1e-8)
    return [f"case {name}", "shape " + " ".join(str(e) for e in shape), f"batch {batch}",
            "tensor logits " + fmt(logits), "tensor target " + fmt(target), "loss %.9g" % loss.item(),
            "tensor grad " + fmt(logits.grad), "end"]


def main():
    names = [c[0] for c in CASES]
    assert len(names) == len(set(names)), "case names must be unique"
    out = [f"# Sluice loss references: PyTorch {torch.__version__}, float32 on the CPU.",
           "# Regenerate from the repository root: python3 tests/model/reference/make_loss_references.py",
           "# Format: tests/model/reference/README.md. Generated; do not edit by hand.", ""]
    for name, shape, batch, targets, scale in CASES:
        out += run_case(name, shape, batch, targets, scale)
    text = "\n".join(out) + "\n"
    with open(OUT_PATH, "w") as f:
        f.write(text)
    print(f"wrote {OUT_PATH}: {len(CASES)} cases, {len(text)} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
