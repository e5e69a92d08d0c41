#!/usr/bin/env python3
"""Checks Sluice's layers (docs/ARCHITECTURE.md, "Layers the build enforces") two ways:

  graph    FILE     every edge of a `bazel query --output=graph` dependency graph (//tools/layering:product_graph)
  includes DIR      every #include "..." and every <mpi.h>/CUDA/NCCL include of the C++ sources under DIR,
                    every MPI communication or wait call outside core/comm and checkpoint/ (MPI_CALL_HOMES), and
                    every comparison of a closed config choice with a string literal (CONFIG_CHOICES)
  package-groups-check BUILD   tools/layering/BUILD's package_group table is the one ALLOWED gives
  package-groups    prints that table (paste it over the BUILD's, from its first package_group on)

Bazel visibility stops a BUILD file from naming a forbidden target, but not a header reached through another
dependency (GCC has no layering check), hence the include scan. Exits 1 and lists every violation.
"""
import os
import re
import sys

# Layer -> the layers it may use. A layer is a top folder, or core/<x>; kernels/cpu and kernels/cuda belong to
# kernels. Folders not listed (tests, bench, examples, third_party, tools/layering) may use anything.
ALLOWED = {
    "core/common": set(),
    "core/schedule": {"core/common"},
    "core/config": {"core/common"},
    "core/data": {"core/common", "core/config"},
    "kernels": {"core/common"},
    "core/model": {"core/common", "core/config", "kernels"},
    "core/comm": {"core/common", "kernels"},
    "checkpoint": {"core/common", "core/comm"},
    "core/runtime": {"core/common", "core/config", "core/data", "core/model", "core/schedule", "core/comm",
                     "kernels", "checkpoint"},
    "slurm": {"core/common", "core/config"},
    "capi": {"core/common", "core/config", "core/comm", "core/model", "core/runtime", "checkpoint", "kernels"},
    "tools": {"core/common", "core/config", "core/data", "core/model", "core/schedule", "core/comm",
              "core/runtime", "checkpoint", "kernels", "slurm"},
}

# Vocabulary: enums and their config spellings, header-only (no code, no further dependencies), which the typed
# config holds. They sit beside the code that uses them, and every layer may include them.
# The field-op geometries (kernels/conv_geometry, kernels/norm_geometry) are the shape vocabulary: plain structs and
# extent arithmetic, no library, which the config's shape rule (core/config/sample_shape.h) and the backends share.
VOCABULARY = {"kernels/activation", "core/model/loss_kind", "core/model/recompute_mode", "core/schedule/schedule_kinds",
              "core/config/choice_table", "core/config/transport_kind", "core/config/gradient_sum_kind",
              "core/config/wait_policy", "core/config/isolated_reads", "core/config/checkpoint_samples",
              "core/config/recompute_halos",
              "core/config/device_kind",
              "core/config/gemm_precision", "kernels/conv_geometry", "kernels/norm_geometry",
              "kernels/spectral_geometry"}

# Test oracles: never part of what ships, whatever layer would otherwise allow them.
TEST_ONLY = {"core/runtime/sequential_reference", "core/runtime/reference_checkpoint"}

# System headers a layer may not include: core/schedule is pure C++ (sluice plan runs it alone); CUDA and
# NCCL stay behind the backend and transport interfaces.
NO_MPI = {"core/common", "core/schedule", "core/config", "core/model", "kernels"}
CUDA_HEADER = re.compile(r"^(cuda|cublas|nccl|cuda_runtime|curand)\w*\.h$")
CUDA_ALLOWED = ("kernels/cuda/", "core/comm/nccl_", "core/runtime/nccl_")

# Every MPI message and wait of Sluice's lives in core/comm, bounded by its wait and failure agreement
# (docs/DESIGN.md, "The central invariant"); checkpoint/ keeps its own, on MPI-IO's side of HDF5. Elsewhere in product code
# (any layer above) these calls are refused: point-to-point, persistent requests, collectives (blocking or not),
# probes, tests and waits. Creating communicators, ranks, sizes and MPI_Wtime are not communication.
MPI_CALL_HOMES = ("core/comm", "checkpoint")
_POINT_TO_POINT = ["Send", "Ssend", "Bsend", "Rsend", "Recv", "Sendrecv", "Sendrecv_replace", "Mrecv",
                   "Send_init", "Ssend_init", "Bsend_init", "Rsend_init", "Recv_init"]
_COLLECTIVE = ["Bcast", "Reduce", "Allreduce", "Reduce_scatter", "Reduce_scatter_block", "Allgather", "Allgatherv",
               "Gather", "Gatherv", "Scatter", "Scatterv", "Alltoall", "Alltoallv", "Alltoallw", "Barrier", "Scan",
               "Exscan", "Neighbor_allgather", "Neighbor_allgatherv", "Neighbor_alltoall", "Neighbor_alltoallv",
               "Neighbor_alltoallw"]
_PROBE = ["Probe", "Mprobe"]
_TEST_AND_WAIT = ["Start", "Startall", "Test", "Testall", "Testany", "Testsome", "Wait", "Waitall", "Waitany",
                  "Waitsome"]
_STARTED = _POINT_TO_POINT + _COLLECTIVE + _PROBE
# Non-blocking forms: MPI_Isend, MPI_Ibcast, MPI_Iallreduce, MPI_Improbe (the name after the I is lower case).
_NON_BLOCKING = ["I" + name[0].lower() + name[1:] for name in _STARTED]
MPI_CALL = re.compile(r"\b(MPI_(?:" + "|".join(_STARTED + _NON_BLOCKING + _TEST_AND_WAIT) + r"))\s*\(")
# Comments and string and character literals, which may name a call ("MPI_Ibcast (rank order)" in an error).
_NOT_CODE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.DOTALL)


def mpi_call_problems(rel, text):
    """The MPI communication and wait calls in `text` (the file at workspace path `rel`) that its layer may not
    make, as 'path:line: MPI_Xxx(: why'."""
    layer = layer_of(rel)
    if layer is None or layer in MPI_CALL_HOMES:
        return []
    code = _NOT_CODE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    problems = []
    for m in MPI_CALL.finditer(code):
        number = code.count("\n", 0, m.start()) + 1
        problems.append(f"{rel}:{number}: {m.group(1)}(: MPI communication and waits live in core/comm (its "
                        f"bounded helpers), not in {layer}")
    return problems


# Closed config choices are enums with one name table (core/config/choice_table.h): product code compares the enum,
# never the YAML spelling. Refused in every checked layer: `<x>.transport == "nccl"`, `"auto" != cfg.comm.wait`, for
# each field below (whatever the variable is called).
CONFIG_CHOICES = ["schedule", "transport", "gradient_sum", "isolated_reads", "wait", "devices", "gemm_precision",
                  "samples", "recompute_halos", "rank_order"]
# ... and the Config helpers that hand one out: device_for_stage(s), gemm_precision_for_stage(s), any_stage_on("cuda").
_CHOICE_FIELD = r"(?:\.(?:" + "|".join(CONFIG_CHOICES) + r")\b|\b(?:device_for_stage|gemm_precision_for_stage)\([^()]*\))"
CONFIG_STRING_COMPARISON = re.compile(_CHOICE_FIELD + r'\s*[!=]=\s*"|"\s*[!=]=\s*[\w:>().-]*' + _CHOICE_FIELD +
                                      r'|\bany_stage_on\(\s*"')
_COMMENT_OR_STRING = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.DOTALL)


def config_string_problems(rel, text):
    """The comparisons of a config choice with a string literal in `text` (the file at workspace path `rel`)."""
    if layer_of(rel) is None:
        return []
    # Comments go (they may quote a comparison); string literals stay, as "" (a comparison with one is the problem).
    code = _COMMENT_OR_STRING.sub(lambda m: '""' if m.group(0)[0] == '"' else "\n" * m.group(0).count("\n"), text)
    lines = text.split("\n")
    problems = []
    for m in CONFIG_STRING_COMPARISON.finditer(code):
        number = code.count("\n", 0, m.start()) + 1
        problems.append(f"{rel}:{number}: {lines[number - 1].strip()}: a config choice compared as a string; compare "
                        f"its enum (core/config/choice_table.h)")
    return problems


# External repositories each layer may link (graph check).
EXTERNAL_ALLOWED = {
    "core/common": set(),
    "core/schedule": set(),
    "core/config": {"yaml_cpp"},
    "core/data": {"hdf5", "random123", "yaml_cpp", "openblas"},
    "kernels": {"openblas", "onednn", "fftw3", "random123", "cuda"},
    "core/model": {"random123", "openblas"},
    "core/comm": {"mpi", "cuda"},
    "checkpoint": {"mpi", "hdf5", "libdeflate"},
}


def layer_of(path):
    """The layer of a workspace path ("core/model/affine.cc") or package ("core/model"); None = unchecked."""
    parts = path.strip("/").split("/")
    if parts[0] == "core" and len(parts) > 1:
        name = "core/" + parts[1]
    else:
        name = parts[0]
    if path.startswith("tools/layering"):
        return None
    return name if name in ALLOWED else None


def edge_problem(src, dst):
    """Why the dependency src -> dst (workspace paths without extension) is forbidden, or None."""
    a, b = layer_of(src), layer_of(dst)
    if a is None:
        return None
    if any(dst.startswith(t) for t in TEST_ONLY) and not any(src.startswith(t) for t in TEST_ONLY):
        return "uses the test oracle " + dst
    if dst.split("/")[0] in ("tests", "bench", "examples"):
        return "uses " + dst.split("/")[0] + "/"
    if b is None or a == b or dst in VOCABULARY:
        return None
    if b not in ALLOWED[a]:
        return a + " may not use " + b
    return None


def parse_label(label):
    """'//core/model:affine' -> ('core/model', 'affine'); '@mpi//:mpi' -> ('@mpi', 'mpi')."""
    m = re.match(r'^(@[\w.-]+)?//([^:]*):?(.*)$', label)
    if not m:
        return None, None
    repo, package, name = m.groups()
    return (repo or "") + package if repo else package, name


def check_graph(path):
    problems = []
    edge = re.compile(r'^\s*"([^"]+)"\s*->\s*"([^"]+)"')
    for line in open(path):
        m = edge.match(line)
        if not m:
            continue
        (sp, sn), (dp, dn) = parse_label(m.group(1)), parse_label(m.group(2))
        if sp is None or dp is None or sp.startswith("@"):
            continue
        if dp.startswith("@"):
            repo = dp[1:].split("//")[0]
            a = layer_of(sp)
            if a in EXTERNAL_ALLOWED and repo not in EXTERNAL_ALLOWED[a] and repo != "bazel_tools":
                problems.append(f"{m.group(1)} -> {m.group(2)}: {a} may not link @{repo}")
            continue
        # A file label (nvcc's genrules list the headers a .cu file reaches) counts as its header's target, so
        # "//core/config:gemm_precision.h" is the vocabulary core/config/gemm_precision, as its #include would be.
        why = edge_problem(sp + "/" + sn, dp + "/" + re.sub(r"\.(h|cuh)$", "", dn))
        if why:
            problems.append(f"{m.group(1)} -> {m.group(2)}: {why}")
    return problems


def check_includes(root):
    problems = []
    include = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(("bazel-", ".")) and d != "third_party"]
        for f in files:
            if not f.endswith((".cc", ".h", ".cu", ".cuh")):
                continue
            full = os.path.join(folder, f)
            rel = os.path.relpath(full, root)
            with open(full, errors="replace") as source:
                text = source.read()
            problems += mpi_call_problems(rel, text) + config_string_problems(rel, text)
            for number, line in enumerate(open(full, errors="replace"), 1):
                m = include.match(line)
                if not m:
                    continue
                kind, target = m.groups()
                why = None
                if kind == '"':
                    why = edge_problem(os.path.splitext(rel)[0], os.path.splitext(target)[0])
                elif target == "mpi.h" and layer_of(rel) in NO_MPI:
                    why = layer_of(rel) + " may not include <mpi.h>"
                elif CUDA_HEADER.match(target) and layer_of(rel) and not rel.startswith(CUDA_ALLOWED):
                    why = "CUDA/NCCL headers only in kernels/cuda and the nccl_* files"
                if why:
                    closing = '"' if kind == '"' else ">"
                    problems.append(f"{rel}:{number}: #include {kind}{target}{closing}: {why}")
    return problems


# Who may depend on a layer, besides the layers ALLOWED names: the product graph query reads capi's targets, and
# tests, benchmarks and examples may use anything.
EXTRA_USERS = {"capi": ['"//tools/layering",  # the product graph query']}
OUTSIDE_USERS = ["//tests/...", "//bench/...", "//examples/..."]


def package_groups_text():
    """tools/layering/BUILD's package_group table, generated from ALLOWED: one group per layer, in ALLOWED's order,
    holding the layer, every layer allowed to use it (sorted), EXTRA_USERS and OUTSIDE_USERS."""
    blocks = []
    for layer in ALLOWED:
        users = sorted(user for user, uses in ALLOWED.items() if user == layer or layer in uses)
        lines = [f'        "//{user}/...",' for user in users] + [f"        {extra}" for extra in EXTRA_USERS.get(layer, [])]
        lines += [f'        "{outside}",' for outside in OUTSIDE_USERS]
        name = layer.replace("/", "_") + "_users"
        blocks.append(f'package_group(\n    name = "{name}",\n    packages = [\n' + "\n".join(lines) + "\n    ],\n)\n")
    return "".join(blocks)


def check_package_groups(build_file):
    """The package_group table of `build_file` (from its first package_group to the end) must be the generated one."""
    with open(build_file) as f:
        text = f.read()
    start = text.find("package_group(")
    found = text[start:] if start >= 0 else ""
    expected = package_groups_text()
    if found == expected:
        return []
    import difflib
    diff = difflib.unified_diff(expected.splitlines(), found.splitlines(), "generated from ALLOWED", build_file,
                                lineterm="")
    return [f"{build_file}: the package_group table differs from the one ALLOWED gives "
            "(regenerate it with `check_layering.py package-groups`):\n" + "\n".join(diff)]


def main(argv):
    if len(argv) == 2 and argv[1] == "package-groups":
        print(package_groups_text(), end="")
        return 0
    commands = {"graph": check_graph, "includes": check_includes, "package-groups-check": check_package_groups}
    if len(argv) != 3 or argv[1] not in commands:
        print(__doc__, file=sys.stderr)
        return 2
    problems = commands[argv[1]](argv[2])
    for p in problems:
        print("layering: " + p)
    print(f"layering: {argv[1]}: {len(problems)} violation(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
