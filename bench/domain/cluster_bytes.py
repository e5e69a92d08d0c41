#!/usr/bin/env python3
"""Bytes per step on the link between two nodes for one rank order of bench/domain/cluster.sh, against the paper.

Reads two run directories of the same config that differ by one step (S and S+1 steps), each with: out.<rank>
(sluice train's output; rank 0's start report names every rank's pipeline rank, domain block and node, and the
bytes the runtime predicted each order puts between nodes), prof.<rank>.prof (Open MPI's pml monitoring:
`E from to N bytes` = point-to-point the program posted, `I ...` = Open MPI's messages for collectives), and
counters.before / counters.after (each node's eth0 "node rx_bytes tx_bytes rx_packets tx_packets").
Per step = long run - short run, so the start (Slurm, PMIx, communicator set-up) and the end cancel.

Paper, per pair of ranks on different nodes (docs/DOMAIN.md "Messages per op and their bytes"; the even split
of `sluice train`, 2 blocks in each split dimension, so a block's low and high halo go to the same neighbour):
  halo: blocks of one stage that differ in split dimension d: sum over the stage's convs of
        4 * C * (low + high) * A_d per sample for the forward fill (C = C_in) and the backward fill (C = C_out;
        none for layer 0, which computes no input gradient), times the step's rows (bench/domain/wire_halo.py);
  boundary: block b of stage 0 <-> block b of stage 1: the block's share of the last stage-0 layer's output and of
        every skip read on stage 1, per row, each way (activations forward, gradients back);
  tile gathers: blocks of one stage: (8 + 4 * parameters of the stage) per held tile to each other block, once per
        step, and on the last stage the field loss, 16 bytes per held tile per micro-batch.
"""
import argparse
import collections
import re
import sys

import yaml

import wire_halo
from link_bytes import per_step, read_prof

RANK_LINE = re.compile(r"rank (\d+): replica (\d+), pipeline rank (\d+), domain block (\d+) .*, node (\d+),")
ORDER_LINE = re.compile(r"rank order (\w+) \((auto|set in the config).*?inter-node bytes per optimizer step: (.*) "
                        r"\(([0-9, and]+) bytes of MPI payload\)")


def read_layout(out0):
    """{rank: (stage, block, node)} and the start report's (chosen order, {order: predicted bytes})."""
    places, order, predicted = {}, None, {}
    with open(out0) as f:
        for line in f:
            m = RANK_LINE.search(line)
            if m:
                places[int(m.group(1))] = (int(m.group(3)), int(m.group(4)), int(m.group(5)))
            m = ORDER_LINE.search(line)
            if m and order is None:
                order = m.group(1)
                names = [item.split()[0] for item in m.group(3).split(", ")]
                numbers = [int(x) for x in re.split(r", | and ", m.group(4))]
                predicted = dict(zip(names, numbers))
    if not places or order is None:
        sys.exit(f"cluster_bytes: no layout or rank order line in {out0}")
    return places, order, predicted


def read_counters(path):
    return {f[0]: [int(x) for x in f[1:]] for f in (line.split() for line in open(path)) if f}


def link_counters(short, long):
    """Per node per step: [rx_bytes, tx_bytes, rx_packets, tx_packets] of its eth0, then its TCP InSegs, OutSegs,
    RetransSegs."""
    result = {}
    runs = [(read_counters(f"{d}/counters.before"), read_counters(f"{d}/counters.after")) for d in (short, long)]
    for node in runs[0][0]:
        (sb, sa), (lb, la) = [(b[node], a[node]) for b, a in runs]
        result[node] = [(la[i] - lb[i]) - (sa[i] - sb[i]) for i in range(len(la))]
    return result


def walk_model(config_path, field, blocks):
    """Per layer: (per split dimension (fwd, bwd) halo bytes per sample, output bytes on one block, parameters)."""
    with open(config_path) as f:
        model = yaml.safe_load(f)["model"]
    channels, extent = model["inputs"][0], [e // b for e, b in zip(field, blocks)]
    named, layers = {}, []
    for layer in model["layers"]:
        kind, out, params, halos = layer["type"], channels, 0, [(0, 0)] * len(blocks)
        if kind == "conv":
            out, k = layer["channels"], layer["kernel"]
            params = out * channels * k ** len(extent) + out
            if k > 1:
                low, high = (k - 1) // 2, k - 1 - (k - 1) // 2
                only = lambda d: [b if j == d else 1 for j, b in enumerate(blocks)]
                halos = [(4 * channels * p, 4 * out * p)
                         for p in (wire_halo._fill_points(extent, only(d), low, high) for d in range(len(blocks)))]
        elif kind == "pool":
            extent = [e // layer["kernel"] for e in extent]
        elif kind == "upsample":
            extent = [e * layer["factor"] for e in extent]
        elif kind == "concat":
            out = channels + named[layer["from"]]
        if "name" in layer:
            named[layer["name"]] = out
        points = 1
        for e in extent:
            points *= e
        layers.append((halos, 4 * out * points, params))
        channels = out
    return layers


class Paper:
    """The step's bytes on paper for the even split of `field` into `blocks` (2 or 1 per dimension)."""

    def __init__(self, a):
        field, self.blocks, tile = ([int(x) for x in s.split(",")] for s in (a.field, a.domain, a.tile))
        assert all(b in (1, 2) for b in self.blocks), "the paper here assumes 1 or 2 blocks per dimension"
        self.layers = walk_model(a.config, field, self.blocks)
        split = [int(x) for x in a.split.split(",")]
        self.stage_layers = [range(sum(split[:s]), sum(split[:s + 1])) for s in range(len(split))]
        self.tiles = 1
        for f, b, t in zip(field, self.blocks, tile):
            self.tiles *= (f // b) // t
        cut = split[0]
        skips = [int(x) for x in a.skips.split(",") if x]
        self.boundary = a.rows * (self.layers[cut - 1][1] + sum(self.layers[s][1] for s in skips))
        self.rows, self.microbatches = a.rows, a.microbatches

    def coords(self, block):
        """A block's grid position (row-major, the last dimension fastest)."""
        position = []
        for count in reversed(self.blocks):
            position.insert(0, block % count)
            block //= count
        return position

    def same_stage(self, stage, b1, b2):
        """{kind: bytes} block b1 of `stage` sends block b2 per step: the halo of the one split dimension they
        differ in (none for diagonal blocks), the tile gathers (and the loss's on the last stage)."""
        kinds = collections.Counter()
        differ = [d for d, (x, y) in enumerate(zip(self.coords(b1), self.coords(b2))) if x != y]
        if len(differ) == 1:
            d = differ[0]
            kinds["halo"] = self.rows * sum(self.layers[l][0][d][0] + (self.layers[l][0][d][1] if l > 0 else 0)
                                            for l in self.stage_layers[stage])
        params = sum(self.layers[l][2] for l in self.stage_layers[stage])
        kinds["gather"] = self.tiles * (8 + 4 * params)
        if stage == len(self.stage_layers) - 1:
            kinds["gather"] += self.tiles * 16 * self.microbatches
        return kinds


def paper_pairs(a, places):
    """{(from, to): {kind: bytes per step}} for every ordered pair of ranks, on paper."""
    paper = Paper(a)
    pairs = collections.defaultdict(lambda: collections.Counter())
    for src, (s1, b1, _) in places.items():
        for dst, (s2, b2, _) in places.items():
            if src != dst and s1 == s2:
                pairs[(src, dst)] = paper.same_stage(s1, b1, b2)
            elif s1 != s2 and b1 == b2:
                pairs[(src, dst)]["boundary"] = paper.boundary
    return pairs


def measured_pairs(step, places):
    """{(from, to): {kind: bytes per step}} from the monitoring; E split into halo / boundary / other by layout."""
    pairs = collections.defaultdict(lambda: collections.Counter())
    for (kind, src, dst), (nbytes, _) in step.items():
        if kind == "I":
            label = "gather"
        elif places[src][0] == places[dst][0]:
            label = "halo"
        elif places[src][1] == places[dst][1]:
            label = "boundary"
        else:
            label = "other"
        pairs[(src, dst)][label] += nbytes
    return pairs


def crossing(pairs, places, src_node=None):
    total = collections.Counter()
    for (src, dst), kinds in pairs.items():
        if places[src][2] != places[dst][2] and (src_node is None or places[src][2] == src_node):
            total.update(kinds)
    return total


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--short", required=True, help="run directory with S steps")
    p.add_argument("--long", required=True, help="run directory with S+1 steps")
    p.add_argument("--header-bytes", type=int, required=True, help="Ethernet + IPv4 + TCP header bytes per frame")
    p.add_argument("--config", required=True)
    p.add_argument("--field", required=True, help="spatial extents, e.g. 64,64,16")
    p.add_argument("--tile", required=True, help="pipeline.domain_tile")
    p.add_argument("--domain", default="2,2,1")
    p.add_argument("--split", default="12,5")
    p.add_argument("--skips", default="1", help="layers whose output is a skip read on the next stage")
    p.add_argument("--rows", type=int, default=2, help="samples per step (data.batch)")
    p.add_argument("--microbatches", type=int, default=2)
    p.add_argument("--auto", help="out.0 of the rank_order auto run: its choice")
    p.add_argument("--check", type=float, help="exit 1 unless the MPI payload crossing and each node's veth payload "
                   "are within this many percent of the paper")
    return p.parse_args()


def main():
    a = parse_args()
    places, order, predicted = read_layout(f"{a.long}/out.0")
    ranks = len(places)
    step = per_step(read_prof(f"{a.long}/prof", ranks), read_prof(f"{a.short}/prof", ranks))
    measured, paper = measured_pairs(step, places), paper_pairs(a, places)
    nodes = sorted({p[2] for p in places.values()})
    print(f"rank order {order}: (stage, block) per node: " + "; ".join(
        f"node {n}: " + " ".join(f"r{r}=({s},{b})" for r, (s, b, m) in sorted(places.items()) if m == n)
        for n in nodes))
    print("MPI payload crossing nodes per step, by kind (monitoring vs paper):")
    kinds = ["halo", "boundary", "gather", "other"]
    m_all, p_all = crossing(measured, places), crossing(paper, places)
    for kind in kinds:
        ratio = f"{m_all[kind] / p_all[kind]:.4f}" if p_all[kind] else "-"
        print(f"  {kind:9s} measured {m_all[kind]:>12,}  paper {p_all[kind]:>12,}  measured/paper {ratio}")
    m_sum, p_sum = sum(m_all.values()), sum(p_all.values())
    print(f"  {'total':9s} measured {m_sum:>12,}  paper {p_sum:>12,}  measured/paper {m_sum / p_sum:.4f}"
          f"  (runtime's prediction for {order}: {predicted.get(order, 0):,})")
    off = {"MPI payload crossing (monitoring)": m_sum}
    link = link_counters(a.short, a.long)
    print(f"the veths per step (frames; payload = frames - packets x {a.header_bytes} header bytes):")
    # Both nodes' retransmitted segments cross the link (each at most one MSS: 1500 - 40 - the TCP options).
    retransmitted = sum(v[6] for v in link.values() if len(v) > 6)
    mss = 1500 - 40 - (a.header_bytes - 54)
    for node_name, (rx, tx, rxp, txp, *segs) in sorted(link.items()):
        node = int(node_name.replace("node", "")) - 1
        sent = sum(crossing(measured, places, node).values())
        frames, packets = rx + tx, rxp + txp
        payload = frames - packets * a.header_bytes
        off[f"{node_name}'s veth payload"] = payload
        print(f"  {node_name}: tx {tx:>12,} ({txp:,} frames) rx {rx:>12,} ({rxp:,} frames); rx+tx {frames:,}"
              f" = payload {payload:,} + headers; MPI payload it sent {sent:,}")
        if segs:
            print(f"    TCP segments in {segs[0]:,} out {segs[1]:,}, retransmitted {segs[2]:,} (S+1-step run minus"
                  f" S-step run); payload less both nodes' {retransmitted:,} retransmitted x {mss} (an upper bound"
                  f" on their bytes): {payload - retransmitted * mss:,} = {(payload - retransmitted * mss) / p_sum:.4f}"
                  " x paper")
        print(f"    rx+tx / paper: frames {frames / p_sum:.4f}, payload {payload / p_sum:.4f};"
              f" / MPI payload measured: frames {frames / m_sum:.4f}, payload {payload / m_sum:.4f}")
    if a.auto:
        _, chosen, auto_predicted = read_layout(a.auto)
        print(f"rank_order auto chose {chosen}; it predicted " +
              ", ".join(f"{k} {v:,}" for k, v in auto_predicted.items()))
    else:
        # auto's rule (core/config/rank_order.h): the smallest prediction, ties to the earlier in this list.
        ties = ["stages_within_node", "stages_across_nodes", "stages_blocks_replicas", "stages_replicas_blocks",
                "replicas_blocks_stages", "replicas_stages_blocks"]
        pick = min((o for o in ties if o in predicted), key=lambda o: (predicted[o], ties.index(o)))
        print(f"rank_order auto would choose {pick} (the smallest of this run's start report's predictions, "
              "ties to auto's order; no auto run reported)")
    if a.check is not None:
        bad = [f"{what} {value:,} is {100 * (value / p_sum - 1):+.2f} % off the paper's {p_sum:,}"
               for what, value in off.items() if abs(value / p_sum - 1) * 100 > a.check]
        for line in bad:
            print(f"CHECK FAILED ({order}, bound {a.check} %): {line}")
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
