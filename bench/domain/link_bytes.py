#!/usr/bin/env python3
"""Bytes per step on each link of a `sluice train` run, against the halo volume on paper (bench/domain/run.sh).

Reads Open MPI's pml monitoring files (`--mca pml_monitoring_enable 2`, one PREFIX.<rank>.prof per world rank) of
two runs of the same config that differ by one step, so that the start (config agreement, communicator set-up) and
the end cancel: per step = (run with S+1 steps) - (run with S steps). In those files a line
`E <from> <to> <n> bytes ...` counts the point-to-point messages the program posted (halo fills, stage-boundary
activations, gradients and skips) and `I <from> <to> ...` the messages Open MPI made for collectives (the tile
gathers of the loss and the parameter gradients, the step's reductions).

Which rank is which: with one replica, a stage's blocks are consecutive world ranks (core/config/layout.h:
block = rank % blocks, stage = rank / blocks); --check verifies that every point-to-point message of the run went to
a peer this layout expects (a same-stage block or the same block on the other stage).

The paper numbers come from `sluice plan --format json` of the split config: per layer, the forward halo (of its
input) and the backward halo (of its output gradient) all blocks receive per sample, and each layer's output on one
block; every block of an even split sends the same (the neighbours are symmetric), so one rank sends 1/blocks of a
stage's halo.
"""
import argparse
import collections
import json
import re
import sys

import wire_halo

LINE = re.compile(r"^([EI])\s+(\d+)\s+(\d+)\s+(\d+) bytes\s+(\d+) msgs sent")


def read_prof(prefix, ranks):
    """{(kind, from, to): (bytes, messages)} over the ranks' files."""
    counts = {}
    for rank in range(ranks):
        with open(f"{prefix}.{rank}.prof") as f:
            for line in f:
                m = LINE.match(line)
                if m:
                    counts[(m.group(1), int(m.group(2)), int(m.group(3)))] = (int(m.group(4)), int(m.group(5)))
    return counts


def per_step(longer, shorter):
    keys = set(longer) | set(shorter)
    return {k: tuple(a - b for a, b in zip(longer.get(k, (0, 0)), shorter.get(k, (0, 0)))) for k in keys}


def paper(plan_json, split, rows):
    """Per stage: (halo bytes one rank sends per step, boundary bytes one block link carries per step and way)."""
    domain = plan_json["domain"]
    blocks = 1
    for b in domain["blocks"]:
        blocks *= b
    fwd, bwd, out = (domain[k] for k in ("halo_bytes_per_sample", "halo_bytes_backward_per_sample",
                                         "block_output_bytes"))
    stages, first = [], 0
    for count in split:
        layers = range(first, first + count)
        stages.append(sum(fwd[i] + bwd[i] for i in layers) * rows // blocks)
        first += count
    return blocks, stages, out


def boundary_paper(out, split, skips, rows):
    """Bytes one block link carries per step in each direction: the last layer's output of stage 0 and every skip
    that crosses the cut (activations forward; their gradients, the same size, backward)."""
    cut = split[0]
    per_sample = out[cut - 1] + sum(out[layer] for layer in skips if layer < cut - 1)
    return per_sample * rows


def wire_per_rank(a, split):
    """Per stage: the halo bytes one rank sends per step by the exchange's formula. The model's first layer computes
    no input gradient, so its backward fill is left out (the plan counts it)."""
    layers = wire_halo.wire_halo_per_sample(a.config, [int(x) for x in a.field.split(",")],
                                            [int(x) for x in a.domain.split(",")])
    layers[0] = (layers[0][0], 0)
    per_stage, first = [], 0
    for count in split:
        per_stage.append(sum(f + b for f, b in layers[first:first + count]) * a.rows)
        first += count
    return per_stage


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--short", required=True, help="prof prefix of the run with S steps")
    p.add_argument("--long", required=True, help="prof prefix of the run with S+1 steps")
    p.add_argument("--ranks", type=int, required=True)
    p.add_argument("--blocks", type=int, required=True)
    p.add_argument("--plan", help="sluice plan --format json of the split config (paper numbers)")
    p.add_argument("--split", default="12,5", help="layers per stage (pipeline.split)")
    p.add_argument("--skips", default="1", help="layers whose output is a skip read on a later stage")
    p.add_argument("--rows", type=int, default=2, help="samples per step (data.batch)")
    p.add_argument("--config", help="with --field and --domain: the wire formula's halo (wire_halo.py)")
    p.add_argument("--field", help="spatial extents, e.g. 128,128,32")
    p.add_argument("--domain", default="2,2,1", help="the split's blocks per dimension")
    return p.parse_args()


def classify(step, blocks):
    """Per rank [halo, boundary, collectives, other point-to-point] bytes, and the links that carried any."""
    sums = collections.defaultdict(lambda: [0, 0, 0, 0])
    links = []
    for (kind, src, dst), (nbytes, msgs) in sorted(step.items()):
        if nbytes == 0 and msgs == 0:
            continue
        if kind == "I":
            column = 2
        elif src // blocks == dst // blocks:
            column = 0  # a block of the same stage
        else:
            column = 1 if src % blocks == dst % blocks else 3  # the same block on the other stage, or neither
        sums[src][column] += nbytes
        links.append((src, dst, kind, nbytes, msgs))
    return sums, links


def plan_columns(a, split, skips):
    """Per stage, the plan's halo bytes one rank sends per step; per block link, the boundary bytes per way."""
    if not a.plan:
        return None, None
    with open(a.plan) as f:
        plan_json = json.load(f)
    plan_blocks, plan_halo, out = paper(plan_json, split, a.rows)
    if a.blocks == 1:
        plan_halo = [0] * len(split)  # one block per stage: the halos wrap onto the block itself, no message
    # one block link of this run carries plan_blocks / a.blocks of the plan's block outputs
    return plan_halo, boundary_paper(out, split, skips, a.rows) * plan_blocks // a.blocks


def print_tables(a, sums, links, wire, plan_halo, plan_boundary):
    stage_of = lambda r: r // a.blocks
    print("links, bytes per step (E: point-to-point the program posted; I: Open MPI's messages for collectives)")
    print(f"{'from':>5} {'to':>4} {'stage->stage':>13} {'kind':>5} {'bytes/step':>14} {'msgs/step':>10}")
    for src, dst, kind, nbytes, msgs in links:
        print(f"{src:>5} {dst:>4} {stage_of(src):>6}->{stage_of(dst):<6} {kind:>5} {nbytes:>14} {msgs:>10}")
    print("\nper rank, bytes sent per step")
    print(f"{'rank':>4} {'stage':>5} {'block':>5} {'halo (same stage)':>18} {'halo wire':>10} {'halo plan':>10} "
          f"{'boundary':>12} {'boundary paper':>15} {'collectives':>12} {'control':>8}")
    for rank in range(a.ranks):
        halo, boundary, coll, other = sums[rank]
        s = stage_of(rank)
        hp = str(plan_halo[s]) if plan_halo else "-"
        bp = str(plan_boundary) if plan_boundary else "-"
        print(f"{rank:>4} {s:>5} {rank % a.blocks:>5} {halo:>18} {wire[s]:>10} {hp:>10} {boundary:>12} {bp:>15} "
              f"{coll:>12} {other:>8}")


def main():
    a = parse_args()
    split = [int(x) for x in a.split.split(",")]
    skips = [int(x) for x in a.skips.split(",") if x]
    step = per_step(read_prof(a.long, a.ranks), read_prof(a.short, a.ranks))
    sums, links = classify(step, a.blocks)
    plan_halo, plan_boundary = plan_columns(a, split, skips)
    wire = wire_per_rank(a, split) if a.config and a.field and a.blocks > 1 else [0] * len(split)
    print_tables(a, sums, links, wire, plan_halo, plan_boundary)
    # Rank 0 exchanges a few hundred bytes per step with every rank (the step's control messages); they land in
    # the halo and boundary columns of rank 0's peers too. More than that between unpaired ranks means the layout
    # above is not the run's.
    other = sum(v[3] for v in sums.values())
    total = sum(sum(v) for v in sums.values())
    if other > 0.01 * total:
        print(f"WARNING: {other} of {total} bytes per step went between ranks this layout does not pair (another "
              "rank order?)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
