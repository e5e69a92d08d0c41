#!/usr/bin/env python3
"""Writes layer_references.txt: forward and gradients of Sluice's field layers computed by PyTorch.

Run once, by hand, when a case is added (CI never runs PyTorch; it only reads the file):

    python3 tests/model/reference/make_layer_references.py            # from the repository root

Needs torch (any 2.x; CPU is enough). Everything is float32 on the CPU, one thread, deterministic algorithms,
and every case draws from its own generator seeded from the case's name, so adding a case does not change the
others. The format is described in README.md beside this file and read by layer_reference_file.h.

Each case: a layer as Sluice's YAML spells it, a per-sample input shape [C, D1[, D2[, D3]]], a batch N, random x,
random parameters, y = layer(x), a random upstream gradient dy, and the gradients of L = sum(y * dy) with respect
to x (dx) and to every parameter (<name>_grad).
"""

import math
import os
import sys
import warnings

import torch
import torch.nn.functional as F

from reference_format import case_lines, make_generator, randn, short_random, write_references

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_PATH = os.path.join(HERE, "layer_references.txt")

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)
torch.set_default_dtype(torch.float32)
# nn.Conv with padding='same' (used only to cross-check) warns about even kernels making a padded copy.
warnings.filterwarnings("ignore", message="Using padding='same'")


def distinct(g, shape):
    """Random values in [-2, 2) that are pairwise distinct (no ties for max pooling)."""
    n = math.prod(shape)
    perm = torch.randperm(n, generator=g).to(torch.float32)
    return ((perm + 0.5) * (4.0 / n) - 2.0).reshape(shape)


def as_tuple(v, dims):
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * dims


# ---------------------------------------------------------------------------------------------------------------
# The layers, as Sluice defines them, in terms of torch.nn.functional.

CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
CONV_T = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}
MAX_POOL = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
AVG_POOL = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}
LINEAR_MODE = {1: "linear", 2: "bilinear", 3: "trilinear"}
PAD_MODE = {"zeros": "constant", "periodic": "circular", "reflect": "reflect"}


def conv_pads(kernel, dilation):
    """(low, high) per spatial dim so that stride 1 keeps the size; even kernels pad one more on the high side."""
    pads = []
    for k, d in zip(kernel, dilation):
        total = d * (k - 1)
        low = total // 2
        pads.append((low, total - low))
    return pads


def conv_forward(layer, dims, x, params):
    kernel = as_tuple(layer["kernel"], dims)
    stride = as_tuple(layer.get("stride", 1), dims)
    dilation = as_tuple(layer.get("dilation", 1), dims)
    groups = layer.get("groups", 1)
    padding = layer.get("padding", "none")
    if padding != "none":
        flat = []
        for low, high in reversed(conv_pads(kernel, dilation)):  # F.pad takes the last dimension first
            flat += [low, high]
        x = F.pad(x, flat, mode=PAD_MODE[padding])
    return CONV[dims](x, params["weight"], params.get("bias"), stride=stride, padding=0, dilation=dilation,
                      groups=groups)


def conv_params(layer, dims, c, g):
    kernel = as_tuple(layer["kernel"], dims)
    groups = layer.get("groups", 1)
    out = layer["channels"]
    fan_in = (c // groups) * math.prod(kernel)
    params = {"weight": randn(g, (out, c // groups) + kernel, 1.0 / math.sqrt(fan_in))}
    if layer.get("bias", True):
        params["bias"] = randn(g, (out,), 0.5)
    return params


def conv_transpose_forward(layer, dims, x, params):
    stride = as_tuple(layer.get("stride", 1), dims)
    return CONV_T[dims](x, params["weight"], params["bias"], stride=stride)


def conv_transpose_params(layer, dims, c, g):
    kernel = as_tuple(layer["kernel"], dims)
    out = layer["channels"]
    fan_in = out * math.prod(kernel)
    return {"weight": randn(g, (c, out) + kernel, 1.0 / math.sqrt(fan_in)), "bias": randn(g, (out,), 0.5)}


def pool_forward(layer, dims, x, params):
    k = layer["kernel"]
    fn = MAX_POOL[dims] if layer["mode"] == "max" else AVG_POOL[dims]
    return fn(x, kernel_size=k, stride=k)


def upsample_forward(layer, dims, x, params):
    mode = layer.get("mode", "nearest")
    if mode == "nearest":
        return F.interpolate(x, scale_factor=layer["factor"], mode="nearest")
    return F.interpolate(x, scale_factor=layer["factor"], mode=LINEAR_MODE[dims], align_corners=False)


def norm_params(layer, dims, c, g):
    return {"weight": 1.0 + randn(g, (c,), 0.5), "bias": randn(g, (c,), 0.5)}


def group_norm_forward(layer, dims, x, params):
    return F.group_norm(x, layer["groups"], params["weight"], params["bias"], eps=1e-5)


def instance_norm_forward(layer, dims, x, params):
    return F.group_norm(x, x.shape[1], params["weight"], params["bias"], eps=1e-5)


def layernorm_forward(layer, dims, x, params):
    last = x.movedim(1, -1)
    y = F.layer_norm(last, (x.shape[1],), params["weight"], params["bias"], eps=1e-5)
    return y.movedim(-1, 1)


LAYERS = {
    "conv": (conv_forward, conv_params),
    "conv_transpose": (conv_transpose_forward, conv_transpose_params),
    "pool": (pool_forward, None),
    "upsample": (upsample_forward, None),
    "group_norm": (group_norm_forward, norm_params),
    "instance_norm": (instance_norm_forward, norm_params),
    "layernorm": (layernorm_forward, norm_params),
    "gelu": (lambda l, d, x, p: F.gelu(x, approximate="tanh"), None),
    "relu": (lambda l, d, x, p: F.relu(x), None),
    "tanh": (lambda l, d, x, p: torch.tanh(x), None),
    "flatten": (lambda l, d, x, p: x.reshape(x.shape[0], -1), None),
}


# ---------------------------------------------------------------------------------------------------------------
# The cases. Extents are small so that the file stays under 300 KB: 1-D ~10, 2-D ~4x5, 3-D ~2x3x4 (all extents
# different, so a transposed index shows); channels 2-4; batch 2 (3 in one case).

S1 = [10]
S2 = [4, 5]
S3 = [2, 3, 4]

CASES = []


def case(name, layer, input_shape, batch=2):
    CASES.append((name, layer, list(input_shape), batch))


def conv(channels, kernel, **options):
    return dict({"type": "conv", "channels": channels, "kernel": kernel}, **options)


# Every padding x every dimension, kernel 3.
for padding in ("none", "zeros", "periodic", "reflect"):
    case(f"conv1d_k3_{padding}", conv(3, 3, padding=padding), [2] + S1)
    case(f"conv2d_k3_{padding}", conv(3, 3, padding=padding), [2] + S2)
    case(f"conv3d_k3_{padding}", conv(2, 3, padding=padding), [2] + (S3 if padding != "none" else [3, 3, 4]))
# Stride 2 (odd and even extents); the second omits padding (its default, none).
case("conv2d_k3_s2_periodic", conv(3, 3, stride=2, padding="periodic"), [2, 5, 6])
case("conv2d_k3_s2_default_padding", conv(3, 3, stride=2), [2, 5, 6])
case("conv2d_k2_s2_zeros", conv(2, 2, stride=2, padding="zeros"), [2, 5, 4])
# Dilation 2.
case("conv2d_k3_d2_periodic", conv(3, 3, dilation=2, padding="periodic"), [2, 4, 5])
case("conv1d_k3_d2_zeros", conv(3, 3, dilation=2, padding="zeros"), [2, 10])
case("conv2d_k3_d2_none", conv(2, 3, dilation=2, padding="none"), [2, 5, 6])
# Groups 2 (4 -> 4 and 4 -> 6 channels).
case("conv2d_k3_g2_periodic", conv(4, 3, groups=2, padding="periodic"), [4, 3, 4])
case("conv2d_k3_g2_none", conv(6, 3, groups=2, padding="none"), [4, 3, 4])
# No bias.
case("conv2d_k3_nobias_periodic", conv(3, 3, padding="periodic", bias=False), [2] + S2)
case("conv3d_k3_nobias_zeros", conv(2, 3, padding="zeros", bias=False), [2] + S3)
# Even kernels: the high side gets one more.
case("conv2d_k2_periodic", conv(3, 2, padding="periodic"), [2] + S2)
case("conv2d_k2_zeros", conv(3, 2, padding="zeros"), [2] + S2)
case("conv2d_k4_periodic", conv(2, 4, padding="periodic"), [2] + S2)
case("conv2d_k4_zeros", conv(2, 4, padding="zeros"), [2] + S2)
case("conv1d_k4_reflect", conv(2, 4, padding="reflect"), [2] + S1)
# Kernels of unequal extents.
case("conv2d_k3x1_periodic", conv(3, [3, 1], padding="periodic"), [2] + S2)
case("conv2d_k1x3_zeros", conv(3, [1, 3], padding="zeros"), [2] + S2)
case("conv2d_k2x3_reflect", conv(2, [2, 3], padding="reflect"), [2] + S2)
case("conv3d_k3x1x2_periodic", conv(2, [3, 1, 2], padding="periodic"), [2] + S3)
# 1x1.
case("conv2d_k1", conv(3, 1), [2] + S2)
# Everything at once.
case("conv2d_k3_s2_d2_g2_reflect", conv(4, 3, stride=2, dilation=2, groups=2, padding="reflect", bias=False),
     [2, 5, 6], batch=3)

for k in (2, 3):
    case(f"conv_transpose1d_k{k}_s2", {"type": "conv_transpose", "channels": 2, "kernel": k, "stride": 2}, [3, 6])
    case(f"conv_transpose2d_k{k}_s2", {"type": "conv_transpose", "channels": 2, "kernel": k, "stride": 2},
         [3, 2, 3])
    case(f"conv_transpose3d_k{k}_s2", {"type": "conv_transpose", "channels": 2, "kernel": k, "stride": 2},
         [2, 2, 1, 2])
case("conv_transpose2d_k3_s1", {"type": "conv_transpose", "channels": 3, "kernel": 3, "stride": 1}, [2, 3, 4])

POOL_SHAPES = {1: [2, 10], 2: [2, 4, 6], 3: [2, 4, 2, 6]}
for dims in (1, 2, 3):
    for mode in ("max", "avg"):
        case(f"pool{dims}d_{mode}_k2", {"type": "pool", "mode": mode, "kernel": 2}, POOL_SHAPES[dims])
case("pool2d_max_k3", {"type": "pool", "mode": "max", "kernel": 3}, [2, 3, 6])
case("pool2d_avg_k3", {"type": "pool", "mode": "avg", "kernel": 3}, [2, 3, 6])

UPSAMPLE_SHAPES = {1: [2, 6], 2: [2, 3, 4], 3: [2, 1, 3, 2]}
for dims in (1, 2, 3):
    for mode in ("nearest", "linear"):
        case(f"upsample{dims}d_{mode}_f2", {"type": "upsample", "factor": 2, "mode": mode}, UPSAMPLE_SHAPES[dims])
case("upsample2d_linear_f3", {"type": "upsample", "factor": 3, "mode": "linear"}, [2, 3, 2])
case("upsample1d_default_f3", {"type": "upsample", "factor": 3}, [2, 5])

case("group_norm2d_g2", {"type": "group_norm", "groups": 2}, [4, 3, 4])
case("group_norm3d_g2", {"type": "group_norm", "groups": 2}, [4, 2, 3, 2])
case("group_norm1d_g1", {"type": "group_norm", "groups": 1}, [2, 10])
case("instance_norm2d", {"type": "instance_norm"}, [3] + S2)
case("instance_norm3d", {"type": "instance_norm"}, [3, 2, 3, 2])

case("layernorm1d", {"type": "layernorm"}, [3, 10])
case("layernorm2d", {"type": "layernorm"}, [3] + S2)
case("layernorm3d", {"type": "layernorm"}, [3, 2, 3, 2])

case("gelu2d", {"type": "gelu"}, [2] + S2)
case("relu2d", {"type": "relu"}, [2] + S2)
case("tanh2d", {"type": "tanh"}, [2] + S2)
case("flatten2d", {"type": "flatten"}, [2] + S2)


# ---------------------------------------------------------------------------------------------------------------

def run_case(name, layer, input_shape, batch):
    g = make_generator(name)
    kind = layer["type"]
    forward, make_params = LAYERS[kind]
    dims = len(input_shape) - 1
    c = input_shape[0]
    shape = (batch,) + tuple(input_shape)
    if kind == "pool" and layer["mode"] == "max":
        x = distinct(g, shape)
    else:
        x = randn(g, shape)
    params = make_params(layer, dims, c, g) if make_params else {}
    x.requires_grad_(True)
    for p in params.values():
        p.requires_grad_(True)
    y = forward(layer, dims, x, params)
    dy = short_random(g, tuple(y.shape))
    loss = (y * dy).sum()
    loss.backward()
    check(name, layer, dims, x, params, y)

    return case_lines(name, layer, input_shape, batch, x, params, y, dy)


def check(name, layer, dims, x, params, y):
    """Cross-checks of the semantics above against PyTorch's module spellings, where one exists."""
    with torch.no_grad():
        kind = layer["type"]
        if kind == "conv" and layer.get("stride", 1) == 1:
            padding = layer.get("padding", "none")
            mode = {"none": "zeros", "zeros": "zeros", "periodic": "circular", "reflect": "reflect"}[padding]
            module = {1: torch.nn.Conv1d, 2: torch.nn.Conv2d, 3: torch.nn.Conv3d}[dims](
                x.shape[1], layer["channels"], layer["kernel"], dilation=layer.get("dilation", 1),
                groups=layer.get("groups", 1), bias="bias" in params,
                padding=0 if padding == "none" else "same", padding_mode=mode)
            module.weight.copy_(params["weight"])
            if "bias" in params:
                module.bias.copy_(params["bias"])
            torch.testing.assert_close(module(x), y, rtol=0, atol=0, msg=f"{name}: nn.Conv 'same' differs")
        if kind == "conv":
            kernel = as_tuple(layer["kernel"], dims)
            stride = as_tuple(layer.get("stride", 1), dims)
            dilation = as_tuple(layer.get("dilation", 1), dims)
            pads = conv_pads(kernel, dilation) if layer.get("padding", "none") != "none" else [(0, 0)] * dims
            expect = [(n + lo + hi - d * (k - 1) - 1) // s + 1
                      for n, (lo, hi), k, s, d in zip(x.shape[2:], pads, kernel, stride, dilation)]
            assert list(y.shape[2:]) == expect, (name, list(y.shape), expect)
        if kind == "instance_norm":
            ref = F.instance_norm(x, weight=params["weight"], bias=params["bias"], eps=1e-5)
            torch.testing.assert_close(ref, y, rtol=1e-5, atol=1e-5)
        if kind == "upsample":
            out = [n * layer["factor"] for n in x.shape[2:]]
            mode = layer.get("mode", "nearest")
            by_size = F.interpolate(x, size=out, mode="nearest" if mode == "nearest" else LINEAR_MODE[dims],
                                    **({} if mode == "nearest" else {"align_corners": False}))
            torch.testing.assert_close(by_size, y, rtol=0, atol=0, msg=f"{name}: size and scale_factor differ")


def main():
    names = [c[0] for c in CASES]
    assert len(names) == len(set(names)), "case names must be unique"
    blocks = [run_case(name, layer, input_shape, batch) for name, layer, input_shape, batch in CASES]
    write_references(OUT_PATH, "layer", "make_layer_references.py", blocks, len(CASES))
    counts = {}
    for _, layer, _, _ in CASES:
        counts[layer["type"]] = counts.get(layer["type"], 0) + 1
    print("  " + ", ".join(f"{k} {v}" for k, v in counts.items()), file=sys.stderr)

if __name__ == "__main__":
    main()
