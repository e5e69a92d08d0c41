"""Mutated `sluice train` configs: each mutation says whether the result is invalid by construction."""
import copy
import dataclasses

BASE = {
    "model": {"inputs": 32, "layers": [
        {"type": "linear", "outputs": 64}, {"type": "gelu"}, {"type": "dropout", "p": 0.1},
        {"type": "linear", "outputs": 64}, {"type": "tanh"}, {"type": "layernorm"},
        {"type": "residual_mlp", "hidden": 128, "activation": "gelu"}, {"type": "linear", "outputs": 8}]},
    "pipeline": {"stages": 1, "schedule": "1f1b", "chunks": 1, "microbatches": 4, "recompute": "none"},
    "loss": "mse",
    "optimizer": {"type": "adamw", "lr": 1.0e-3},
    "data": {"type": "synthetic", "batch": 16},
    "checkpoint": {"dir": "", "every": 0, "keep": 3},
    "seed": 1,
    "steps": 2,
}

# Values that have broken parsers and size arithmetic before: overflow edges, non-finite, wrong types, huge text.
NASTY = [0, -1, 1, -2**31, 2**31 - 1, 2**31, 2**32 + 1, 2**63 - 1, 2**63, 2305843009213693960, 2305843009213693952,
         1e308, -1e-308, 3.5, ".nan", ".inf", "-.inf", "", "abc", "null", "~", "true", "false", "1e9", "0x10",
         "-0", "é✓", "x" * 5000, [], {}, [1, 2], {"a": 1}]
LAYER_TYPES = ["linear", "gelu", "relu", "tanh", "dropout", "layernorm", "residual_mlp", "softmax", "conv", "custom"]


@dataclasses.dataclass
class Mutation:
    text: str
    overrides: list
    invalid: bool
    description: str


def emit(value, indent=0):
    """A small YAML emitter (block maps, flow lists of maps) so mutations act on structure, not on text."""
    pad = "  " * indent
    if isinstance(value, dict):
        return "".join(_emit_entry(key, item, indent) for key, item in value.items()) or pad + "{}\n"
    return pad + scalar(value) + "\n"


def _emit_entry(key, item, indent):
    pad = "  " * indent
    if isinstance(item, dict) and item:
        return f"{pad}{key}:\n" + emit(item, indent + 1)
    return f"{pad}{key}: {scalar(item)}\n"


def scalar(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(scalar(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {scalar(v)}" for k, v in value.items()) + "}"
    if value in (".nan", ".inf", "-.inf", "null", "~", "true", "false"):
        return value
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def leaves(tree, prefix=()):
    """Every (path, value) of the config, list items included, so any scalar can be hit."""
    items = tree.items() if isinstance(tree, dict) else enumerate(tree)
    for key, value in items:
        if isinstance(value, (dict, list)) and value:
            yield from leaves(value, prefix + (key,))
        else:
            yield prefix + (key,), value


def set_path(tree, path, value):
    node = tree
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


def mutate_leaf(rng):
    tree = copy.deepcopy(BASE)
    path, old = rng.choice(list(leaves(tree)))
    new = rng.choice(NASTY)
    set_path(tree, path, new)
    wrong_type = isinstance(new, (list, dict)) or (isinstance(old, (int, float)) and new in ("abc", "é✓", "x" * 5000))
    return Mutation(emit(tree), [], wrong_type, f"{'.'.join(map(str, path))} = {scalar(new)[:40]}")


def delete_key(rng):
    tree = copy.deepcopy(BASE)
    path, _ = rng.choice(list(leaves(tree)))
    node = tree
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    return Mutation(emit(tree), [], False, f"deleted {'.'.join(map(str, path))}")


def unknown_key(rng):
    tree = copy.deepcopy(BASE)
    section = rng.choice(["model", "pipeline", "optimizer", "data", "checkpoint", None])
    target = tree[section] if section else tree
    target["stpes" if section is None else "colour"] = 3
    return Mutation(emit(tree), [], True, f"unknown key in {section or 'top level'}")


def duplicate_key(rng):
    text = emit(BASE)
    key = rng.choice(["steps", "seed", "loss"])
    return Mutation(text + f"{key}: {rng.choice([2, 3, 'mse'])}\n", [], True, f"duplicate {key}")


def extra_document(rng):
    return Mutation(emit(BASE) + "---\nsteps: 5\n", [], True, "second YAML document")


def deep_nesting(rng):
    depth = rng.choice([100, 1000, 20000])
    tree = copy.deepcopy(BASE)
    text = emit(tree).replace("seed: 1", "seed: " + "[" * depth + "1" + "]" * depth)
    return Mutation(text, [], True, f"seed nested {depth} deep")


def layer_soup(rng):
    tree = copy.deepcopy(BASE)
    layers = []
    for _ in range(rng.randint(0, 12)):
        layer = {"type": rng.choice(LAYER_TYPES)}
        if rng.random() < 0.6:
            layer[rng.choice(["outputs", "hidden", "p", "activation", "eps"])] = rng.choice(NASTY[:16] + [8, 64])
        layers.append(layer)
    tree["model"]["layers"] = layers
    return Mutation(emit(tree), [], any(l["type"] in ("conv", "custom", "softmax") for l in layers),
                    f"{len(layers)} random layers")


def byte_damage(rng):
    data = bytearray(emit(BASE).encode())
    for _ in range(rng.randint(1, 6)):
        data[rng.randrange(len(data))] = rng.randrange(256)
    if rng.random() < 0.3:
        data = data[:rng.randrange(len(data))]
    return Mutation(data.decode("utf-8", "replace"), [], False, "random bytes changed or file truncated")


def override(rng):
    known = [".".join(map(str, p)) for p, _ in leaves(BASE)]
    existing = rng.random() < 0.7
    key = rng.choice(known) if existing else rng.choice(["pipeline.colour", "model.layers.99.outputs", "a..b", "=",
                                                         "steps.x", "model.layers.-1.outputs", ""])
    value = scalar(rng.choice(NASTY)).strip('"')
    return Mutation(emit(BASE), [f"{key}={value}"], not existing, f"--set {key}={value[:40]}")


OPERATORS = [mutate_leaf, mutate_leaf, mutate_leaf, delete_key, unknown_key, duplicate_key, extra_document,
             deep_nesting, layer_soup, byte_damage, override, override]


def random_mutation(rng):
    return rng.choice(OPERATORS)(rng)
