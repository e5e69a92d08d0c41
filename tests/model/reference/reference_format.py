"""What the reference generators share (make_layer_references.py, make_spectral_references.py,
make_transformer_references.py): seeded random tensors, the layer entry as YAML flow text, and the file format of
README.md beside this file (one `case` block per layer, then the file written with its header)."""

import sys
import zlib

import torch


def make_generator(name):
    """A generator seeded from the case name, so adding a case changes no other case's values."""
    g = torch.Generator()
    g.manual_seed(zlib.crc32(name.encode()) & 0x7FFFFFFF)
    return g


def randn(g, shape, scale=1.0):
    return torch.randn(shape, generator=g, dtype=torch.float32) * scale


def short_random(g, shape):
    """Random odd multiples of 1/32 in (-2, 2): exact in float32, never zero, short in decimal (keeps the file small)."""
    k = torch.randint(-32, 32, shape, generator=g, dtype=torch.int64)
    return ((2 * k + 1).to(torch.float32) / 32.0)


def yaml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(yaml_value(e) for e in v) + "]"
    return str(v)


def yaml_flow(layer):
    return "{" + ", ".join(f"{k}: {yaml_value(v)}" for k, v in layer.items()) + "}"


def fmt(t):
    flat = t.detach().to(torch.float32).contiguous().reshape(-1).tolist()
    return f"{len(flat)} " + " ".join("%.9g" % v for v in flat)


def case_lines(name, layer, input_shape, batch, x, params, y, dy):
    """One case block: the entry, the input and parameters, the output, dy and every gradient (backward done)."""
    lines = [f"case {name}", f"layer {yaml_flow(layer)}", "input " + " ".join(str(e) for e in input_shape),
             f"batch {batch}", "tensor x " + fmt(x)]
    lines += [f"tensor {pname} " + fmt(p) for pname, p in params.items()]
    lines += ["tensor y " + fmt(y), "tensor dy " + fmt(dy), "tensor dx " + fmt(x.grad)]
    lines += [f"tensor {pname}_grad " + fmt(p.grad) for pname, p in params.items()]
    return lines + ["end"]


def write_references(path, what, script, blocks, count):
    """Writes the header and the case blocks (lists of lines) to `path`."""
    out = [f"# Sluice {what} references: PyTorch {torch.__version__}, float32 on the CPU.",
           f"# Regenerate from the repository root: python3 tests/model/reference/{script}",
           "# Format: tests/model/reference/README.md. Generated; do not edit by hand.", ""]
    for block in blocks:
        out += block
    text = "\n".join(out) + "\n"
    with open(path, "w") as f:
        f.write(text)
    print(f"wrote {path}: {count} cases, {len(text)} bytes", file=sys.stderr)
