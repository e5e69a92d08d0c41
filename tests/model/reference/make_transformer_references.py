#!/usr/bin/env python3
"""Writes transformer_references.txt: forward and gradients of Sluice's patch_embed, transformer and unpatch layers
computed by PyTorch, in the format of layer_references.txt (README.md beside this file).

Run once, by hand, when a case is added (CI never runs PyTorch; it only reads the file):

    /work/torchvenv/bin/python tests/model/reference/make_transformer_references.py   # from the repository root

Tokens are Sluice's [D, T] per sample (channel-first: element (d, t) at d*T + t). The transformer block is timm's
pre-norm `Block` (written out below, on [B, T, D] after a transpose): x = x + proj(attn(norm1(x))), x = x +
fc2(gelu_tanh(fc1(norm2(x)))), attention scale 1/sqrt(D/H), qkv laid out as (3, H, D/H). The parameters get random
values (not the layers' initial ones: Sluice's init is PyTorch's default for the linear maps and the conv, norms 1
and 0, pos_embed zeros; a random pos_embed tests its gradient).
"""

import math
import os

import torch
import torch.nn.functional as F

from reference_format import case_lines, make_generator, randn, short_random, write_references

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_PATH = os.path.join(HERE, "transformer_references.txt")

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)
torch.set_default_dtype(torch.float32)

CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def per_dim(v, dims):
    return list(v) if isinstance(v, (list, tuple)) else [v] * dims


# ---------------------------------------------------------------------------------------------------------------
# The layers.

def patch_embed_params(layer, shape, g):
    c, dims = shape[0], len(shape) - 1
    patch = per_dim(layer["patch"], dims)
    d = layer["dim"]
    tokens = math.prod(n // p for n, p in zip(shape[1:], patch))
    fan_in = c * math.prod(patch)
    return {"proj.weight": randn(g, (d, c) + tuple(patch), 1.0 / math.sqrt(fan_in)),
            "proj.bias": randn(g, (d,), 0.5), "pos_embed": randn(g, (1, d, tokens), 0.5)}


def patch_embed_forward(layer, x, params):
    dims = x.dim() - 2
    patch = per_dim(layer["patch"], dims)
    y = CONV[dims](x, params["proj.weight"], params["proj.bias"], stride=patch)
    return y.flatten(2) + params["pos_embed"]  # [B, D, T]


def transformer_params(layer, shape, g):
    d = shape[0]
    hidden = layer.get("mlp_ratio", 4) * d

    def linear(out, inp):
        return randn(g, (out, inp), 1.0 / math.sqrt(inp)), randn(g, (out,), 0.5)

    p = {"norm1.weight": 1.0 + randn(g, (d,), 0.5), "norm1.bias": randn(g, (d,), 0.5)}
    p["attn.qkv.weight"], p["attn.qkv.bias"] = linear(3 * d, d)
    p["attn.proj.weight"], p["attn.proj.bias"] = linear(d, d)
    p["norm2.weight"], p["norm2.bias"] = 1.0 + randn(g, (d,), 0.5), randn(g, (d,), 0.5)
    p["mlp.fc1.weight"], p["mlp.fc1.bias"] = linear(hidden, d)
    p["mlp.fc2.weight"], p["mlp.fc2.bias"] = linear(d, hidden)
    return p


def attention(x, p, heads):
    """timm's Attention (qkv_bias=True, no q/k norm, no dropout) on x [B, N, C]."""
    b, n, c = x.shape
    qkv = F.linear(x, p["attn.qkv.weight"], p["attn.qkv.bias"]).reshape(b, n, 3, heads, c // heads)
    q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
    attn = (q * (c // heads) ** -0.5) @ k.transpose(-2, -1)
    attn = attn.softmax(dim=-1)
    out = (attn @ v).transpose(1, 2).reshape(b, n, c)
    return F.linear(out, p["attn.proj.weight"], p["attn.proj.bias"])


def transformer_forward(layer, x, p):
    eps = layer.get("eps", 1e-5)
    d = x.shape[1]
    t = x.transpose(1, 2)  # [B, T, D]
    t = t + attention(F.layer_norm(t, (d,), p["norm1.weight"], p["norm1.bias"], eps), p, layer["heads"])
    h = F.layer_norm(t, (d,), p["norm2.weight"], p["norm2.bias"], eps)
    h = F.gelu(F.linear(h, p["mlp.fc1.weight"], p["mlp.fc1.bias"]), approximate="tanh")
    t = t + F.linear(h, p["mlp.fc2.weight"], p["mlp.fc2.bias"])
    return t.transpose(1, 2)


def unpatch_forward(layer, x, params):
    """MAE's unpatchify: token (g1, ..) fills the patch at (g1*p1, ..), its features read as (p1, .., c)."""
    grid = layer["grid"]
    k = len(grid)
    patch = per_dim(layer["patch"], k)
    c = layer["channels"]
    b = x.shape[0]
    t = x.transpose(1, 2).reshape([b] + grid + patch + [c])
    order = [0, 2 * k + 1]
    for i in range(k):
        order += [1 + i, 1 + k + i]
    return t.permute(order).reshape([b, c] + [gi * pi for gi, pi in zip(grid, patch)])


LAYERS = {
    "patch_embed": (patch_embed_forward, patch_embed_params),
    "transformer": (transformer_forward, transformer_params),
    "unpatch": (unpatch_forward, None),
}

CASES = []


def case(name, layer, input_shape, batch=2):
    CASES.append((name, layer, list(input_shape), batch))


case("patch_embed1d_p4", {"type": "patch_embed", "patch": 4, "dim": 3}, [2, 12])
case("patch_embed2d_p2x3", {"type": "patch_embed", "patch": [2, 3], "dim": 5}, [3, 4, 6])
case("patch_embed3d_p2x1x3", {"type": "patch_embed", "patch": [2, 1, 3], "dim": 4}, [2, 4, 2, 6])
case("transformer_d8_t5_h2", {"type": "transformer", "heads": 2}, [8, 5])
case("transformer_d6_t3_h3_r2_eps1e-6", {"type": "transformer", "heads": 3, "mlp_ratio": 2, "eps": 1e-6}, [6, 3],
     batch=3)
case("transformer_d4_t7_h1", {"type": "transformer", "heads": 1, "mlp_ratio": 1, "dropout": 0}, [4, 7])
case("unpatch1d_p3", {"type": "unpatch", "patch": 3, "channels": 2, "grid": [4]}, [6, 4])
case("unpatch2d_p2x3", {"type": "unpatch", "patch": [2, 3], "channels": 2, "grid": [2, 3]}, [12, 6])
case("unpatch3d_p2x1x2", {"type": "unpatch", "patch": [2, 1, 2], "channels": 2, "grid": [1, 2, 2]}, [8, 4])


def run_case(name, layer, input_shape, batch):
    g = make_generator(name)
    forward, make_params = LAYERS[layer["type"]]
    x = randn(g, (batch,) + tuple(input_shape))
    params = make_params(layer, input_shape, g) if make_params else {}
    x.requires_grad_(True)
    for p in params.values():
        p.requires_grad_(True)
    y = forward(layer, x, params)
    dy = short_random(g, tuple(y.shape))
    (y * dy).sum().backward()
    return case_lines(name, layer, input_shape, batch, x, params, y, dy)


def check_unpatch_is_mae():
    """The general unpatch above against MAE's own 2-D unpatchify (square patches, 'nhwpqc->nchpwq')."""
    g = make_generator("mae")
    b, h, w, p, c = 2, 2, 3, 2, 3
    x = randn(g, (b, p * p * c, h * w))
    ours = unpatch_forward({"grid": [h, w], "patch": p, "channels": c}, x, {})
    t = x.transpose(1, 2).reshape(b, h, w, p, p, c)
    mae = torch.einsum("nhwpqc->nchpwq", t).reshape(b, c, h * p, w * p)
    assert torch.equal(ours, mae)


def main():
    check_unpatch_is_mae()
    names = [c[0] for c in CASES]
    assert len(names) == len(set(names)), "case names must be unique"
    blocks = [run_case(name, layer, input_shape, batch) for name, layer, input_shape, batch in CASES]
    write_references(OUT_PATH, "transformer layer", "make_transformer_references.py", blocks, len(CASES))

if __name__ == "__main__":
    main()
