"""The halo bytes one block sends per sample on paper, as the exchange moves them (docs/DOMAIN.md, "Messages per op
and their bytes"): a fill sends, per split dimension d (one with more than one block), 4 * C * (low + high) * A_d
bytes, A_d = the padded extents of the dimensions before d times the block extents of those after; a dimension of
one block wraps onto the block itself (no message). A conv's forward fills its input (C_in), its backward its output
gradient (C_out). Walks the model of bench/domain/unet3d.yaml: conv, gelu, pool, nearest upsample, concat."""
import yaml


def _fill_points(extent, blocks, low, high):
    points = 0
    for d, count in enumerate(blocks):
        if count == 1:
            continue
        area = 1
        for j, e in enumerate(extent):
            area *= e + low + high if j < d else (e if j > d else 1)
        points += (low + high) * area
    return points


def wire_halo_per_sample(config_path, field, blocks):
    """Per layer: (forward bytes, backward bytes) one block sends per sample, for an even split of `field`."""
    with open(config_path) as f:
        model = yaml.safe_load(f)["model"]
    layers, channels = model["layers"], model["inputs"][0]
    extent = [e // b for e, b in zip(field, blocks)]
    named, result = {}, []
    for layer in layers:
        kind, fwd, bwd, out = layer["type"], 0, 0, channels
        if kind == "conv":
            out = layer["channels"]
            k = layer["kernel"]
            if k > 1:
                points = _fill_points(extent, blocks, (k - 1) // 2, k - 1 - (k - 1) // 2)
                fwd, bwd = 4 * channels * points, 4 * out * points
        elif kind == "pool":
            extent = [e // layer["kernel"] for e in extent]
        elif kind == "upsample":
            extent = [e * layer["factor"] for e in extent]
        elif kind == "concat":
            out = channels + named[layer["from"]]
        elif kind != "gelu":
            raise ValueError(f"wire_halo: layer type {kind} is not walked")
        if "name" in layer:
            named[layer["name"]] = out
        channels = out
        result.append((fwd, bwd))
    return result
