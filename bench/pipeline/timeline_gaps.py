#!/usr/bin/env python3
"""Where a pipelined step loses time between compute actions, from pipeline_bench --trace-dir DIR timelines.

    python3 bench/pipeline/timeline_gaps.py DIR [SCHEDULE ...]

Every compute action of a rank starts after a gap (the end of the rank's previous compute action to its own start).
When its input comes from another rank (F of a stage whose previous stage lives elsewhere; B or I of a stage whose
next stage does), the producer's end on the other rank's timeline (the same steady clock: ranks of one node)
splits the gap:
  - data late:   the producer ended after the consumer was free. `needed` = producer end - consumer free is the
                 wait the schedule itself imposes (bubble); `late start` = consumer start - producer end is what the
                 message and the waiting rank's wake-up added on top.
  - data ready:  the gap is executor overhead only (posting, sends, bookkeeping).
Prints one table row per schedule: totals per step over all ranks, in ms.
"""
import csv
import os
import re
import sys
from collections import defaultdict

ACTION = re.compile(r"^(\d+)([FBIW])(\d+)$")


def load(directory, schedule):
    ranks = []
    rank = 0
    while os.path.exists(os.path.join(directory, f"{schedule}.rank{rank}.csv")):
        with open(os.path.join(directory, f"{schedule}.rank{rank}.csv")) as f:
            rows = []
            for row in csv.DictReader(f):
                match = ACTION.match(row["action"])
                if not match:
                    raise SystemExit(f"{schedule}.rank{rank}.csv: cannot read action '{row['action']}'")
                start, duration = float(row["start_us"]), float(row["duration_us"])
                rows.append({"stage": int(match.group(1)), "kind": match.group(2), "mb": int(match.group(3)),
                             "start": start, "end": start + duration, "gap": float(row["gap_before_us"])})
            ranks.append(rows)
        rank += 1
    return ranks


def producer_key(action, last_stage):
    """(stage, kinds, micro-batch) of the action whose output this one consumes, or None (model input / loss)."""
    s, kind, m = action["stage"], action["kind"], action["mb"]
    if kind == "F":
        return (s - 1, "F", m) if s > 0 else None
    if kind in "BI":
        return (s + 1, "BI", m) if s < last_stage else None
    return None  # W uses what its own rank's I left


def analyse(ranks):
    stage_rank = {a["stage"]: r for r, rows in enumerate(ranks) for a in rows}
    last_stage = max(stage_rank)
    ends = {}
    for rows in ranks:
        for a in rows:
            kinds = "F" if a["kind"] == "F" else ("BI" if a["kind"] in "BI" else "W")
            ends[(a["stage"], kinds, a["mb"])] = a["end"]
    totals = defaultdict(float)
    for r, rows in enumerate(ranks):
        previous_end = rows[0]["start"] - rows[0]["gap"] if rows else 0.0
        for a in rows:
            totals["busy"] += a["end"] - a["start"]
            key = producer_key(a, last_stage)
            remote = key is not None and stage_rank[key[0]] != r
            if remote and ends[key] > previous_end:
                totals["late_count"] += 1
                totals["needed"] += ends[key] - previous_end
                totals["late_start"] += a["start"] - ends[key]
                totals["late_start_max"] = max(totals["late_start_max"], a["start"] - ends[key])
            else:
                totals["ready_count"] += 1
                totals["ready_gap"] += a["start"] - previous_end
            previous_end = a["end"]
        totals["span"] = max(totals["span"], previous_end - (rows[0]["start"] - rows[0]["gap"]) if rows else 0.0)
    return totals


def main(argv):
    if not argv:
        raise SystemExit(__doc__)
    directory = argv[0]
    schedules = argv[1:] or sorted({f.split(".rank")[0] for f in os.listdir(directory) if ".rank" in f})
    print("| schedule | span ms (slowest rank) | busy ms (all ranks) | waits on late data | needed ms | "
          "late start ms (mean / max) | gaps with data ready: count, ms |")
    print("|---|---:|---:|---:|---:|---|---|")
    for schedule in schedules:
        ranks = load(directory, schedule)
        if not ranks:
            print(f"| {schedule} | no timeline files | | | | | |")
            continue
        t = analyse(ranks)
        count = max(t["late_count"], 1)
        print(f"| {schedule} | {t['span'] / 1e3:.1f} | {t['busy'] / 1e3:.1f} | {int(t['late_count'])} | "
              f"{t['needed'] / 1e3:.1f} | {t['late_start'] / 1e3:.2f} ({t['late_start'] / count / 1e3:.3f} / "
              f"{t['late_start_max'] / 1e3:.3f}) | {int(t['ready_count'])}, {t['ready_gap'] / 1e3:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
