#!/usr/bin/env python3
"""Writes spectral_references.txt: forward and gradients of Sluice's spectral_conv and fno_block by PyTorch.

Run once, by hand, when a case is added (CI never runs PyTorch; it only reads the file):

    python3 tests/model/reference/make_spectral_references.py         # from the repository root

The format is make_layer_references.py's (README.md beside this file). The spectral convolution is the FNO paper's
SpectralConv1d/2d/3d (github.com/neuraloperator/neuraloperator, fourier_1d.py .. fourier_3d.py), written out below
as that code has it: torch.fft.rfftn, the kept corners of out_ft each set to compl_mul(x_ft corner, weights_j), and
torch.fft.irfftn to the input's extents. Its complex weights1..weights4 are views of Sluice's one real parameter
`weight` [in, out, 2·m1, .., 2·m(k−1), mk, 2] (real, imaginary last; in a non-last dimension the first m rows are the
low modes 0..m−1, the next m the high modes −m..−1), so the gradients PyTorch reports for it are in Sluice's layout.
fno_block is GELU(tanh form)(spectral(x) + conv1x1(x) + bias), the parameters spectral.weight, pointwise.weight
[out, in, 1, ..] and pointwise.bias [out].
"""

import os

import torch
import torch.nn.functional as F

from reference_format import case_lines, make_generator, randn, short_random, write_references

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_PATH = os.path.join(HERE, "spectral_references.txt")

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)
torch.set_default_dtype(torch.float32)

CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


# ---------------------------------------------------------------------------------------------------------------
# The FNO paper's spectral convolutions, as its code writes them (weights given rather than drawn).

def compl_mul(x, w):
    letters = "xyz"[:x.dim() - 2]
    return torch.einsum(f"bi{letters},io{letters}->bo{letters}", x, w)


def spectral_conv1d(x, weights1, modes):
    (m1,) = modes
    x_ft = torch.fft.rfft(x)
    out_ft = torch.zeros(x.shape[0], weights1.shape[1], x.size(-1) // 2 + 1, dtype=torch.cfloat)
    out_ft[:, :, :m1] = compl_mul(x_ft[:, :, :m1], weights1)
    return torch.fft.irfft(out_ft, n=x.size(-1))


def spectral_conv2d(x, weights1, weights2, modes):
    m1, m2 = modes
    x_ft = torch.fft.rfft2(x)
    out_ft = torch.zeros(x.shape[0], weights1.shape[1], x.size(-2), x.size(-1) // 2 + 1, dtype=torch.cfloat)
    out_ft[:, :, :m1, :m2] = compl_mul(x_ft[:, :, :m1, :m2], weights1)
    out_ft[:, :, -m1:, :m2] = compl_mul(x_ft[:, :, -m1:, :m2], weights2)
    return torch.fft.irfft2(out_ft, s=(x.size(-2), x.size(-1)))


def spectral_conv3d(x, weights1, weights2, weights3, weights4, modes):
    m1, m2, m3 = modes
    x_ft = torch.fft.rfftn(x, dim=[-3, -2, -1])
    out_ft = torch.zeros(x.shape[0], weights1.shape[1], x.size(-3), x.size(-2), x.size(-1) // 2 + 1,
                         dtype=torch.cfloat)
    out_ft[:, :, :m1, :m2, :m3] = compl_mul(x_ft[:, :, :m1, :m2, :m3], weights1)
    out_ft[:, :, -m1:, :m2, :m3] = compl_mul(x_ft[:, :, -m1:, :m2, :m3], weights2)
    out_ft[:, :, :m1, -m2:, :m3] = compl_mul(x_ft[:, :, :m1, -m2:, :m3], weights3)
    out_ft[:, :, -m1:, -m2:, :m3] = compl_mul(x_ft[:, :, -m1:, -m2:, :m3], weights4)
    return torch.fft.irfftn(out_ft, s=(x.size(-3), x.size(-2), x.size(-1)))


def paper_weights(weight, modes):
    """weights1.. of the paper's layer as complex views of Sluice's weight [in, out, 2·m1, .., mk, 2]."""
    c = lambda w: torch.view_as_complex(w.contiguous())
    if len(modes) == 1:
        return [c(weight)]
    m1 = modes[0]
    if len(modes) == 2:
        return [c(weight[:, :, :m1]), c(weight[:, :, m1:])]
    m2 = modes[1]
    return [c(weight[:, :, :m1, :m2]), c(weight[:, :, m1:, :m2]), c(weight[:, :, :m1, m2:]), c(weight[:, :, m1:, m2:])]


def spectral(x, weight, modes):
    fn = {1: spectral_conv1d, 2: spectral_conv2d, 3: spectral_conv3d}[len(modes)]
    return fn(x, *paper_weights(weight, modes), modes)


def weight_shape(c_in, c_out, modes):
    return (c_in, c_out) + tuple(2 * m for m in modes[:-1]) + (modes[-1], 2)


# ---------------------------------------------------------------------------------------------------------------

CASES = []


def case(name, layer, input_shape, batch=2):
    CASES.append((name, layer, list(input_shape), batch))


def spectral_case(name, channels, modes, input_shape, batch=2):
    case(name, {"type": "spectral_conv", "channels": channels, "modes": modes}, input_shape, batch)


def fno_case(name, channels, modes, input_shape, batch=2):
    case(name, {"type": "fno_block", "channels": channels, "modes": modes}, input_shape, batch)


# 1-D: some modes; every mode of an even extent (the Nyquist mode n/2 kept); every mode of an odd one.
spectral_case("spectral1d_m5_n16", 2, [5], [3, 16])
spectral_case("spectral1d_nyquist_n8", 3, [5], [2, 8])
spectral_case("spectral1d_all_n9", 2, [5], [2, 9], batch=3)
# 2-D: some modes; 2·m = n in the first dimension and the Nyquist mode in the last; odd extents.
spectral_case("spectral2d_m3x4_n8x10", 2, [3, 4], [3, 8, 10])
spectral_case("spectral2d_full_n6x8", 3, [3, 5], [2, 6, 8])
spectral_case("spectral2d_odd_n7x5", 2, [2, 3], [2, 7, 5])
# 3-D: all four corners; then every mode.
spectral_case("spectral3d_m2x2x3_n6x4x8", 2, [2, 2, 3], [2, 6, 4, 8])
spectral_case("spectral3d_full_n4x6x4", 2, [2, 3, 3], [2, 4, 6, 4])
fno_case("fno_block1d", 3, [4], [3, 12])
fno_case("fno_block2d", 4, [3, 3], [3, 8, 8])
fno_case("fno_block3d", 2, [2, 2, 3], [2, 4, 6, 6])


def params_of(layer, c_in, dims, g):
    c_out, modes = layer["channels"], layer["modes"]
    weight = randn(g, weight_shape(c_in, c_out, modes), 0.5)
    if layer["type"] == "spectral_conv":
        return {"weight": weight}
    return {"spectral.weight": weight,
            "pointwise.weight": randn(g, (c_out, c_in) + (1,) * dims, c_in ** -0.5),
            "pointwise.bias": randn(g, (c_out,), 0.5)}


def forward(layer, x, params):
    modes = layer["modes"]
    if layer["type"] == "spectral_conv":
        return spectral(x, params["weight"], modes)
    s = spectral(x, params["spectral.weight"], modes)
    p = CONV[len(modes)](x, params["pointwise.weight"], params["pointwise.bias"])
    return F.gelu(s + p, approximate="tanh")


def run_case(name, layer, input_shape, batch):
    g = make_generator(name)
    c_in, dims = input_shape[0], len(input_shape) - 1
    x = randn(g, (batch,) + tuple(input_shape))
    params = params_of(layer, c_in, dims, g)
    x.requires_grad_(True)
    for p in params.values():
        p.requires_grad_(True)
    y = forward(layer, x, params)
    dy = short_random(g, tuple(y.shape))
    (y * dy).sum().backward()
    return case_lines(name, layer, input_shape, batch, x, params, y, dy)


def main():
    blocks = [run_case(name, layer, input_shape, batch) for name, layer, input_shape, batch in CASES]
    write_references(OUT_PATH, "spectral layer", "make_spectral_references.py", blocks, len(CASES))


if __name__ == "__main__":
    main()
