#!/usr/bin/env python3
"""The zero-bubble authors' ZB-V orders, scored the way Sluice's tests score their own.

Source: sail-sg/zero-bubble-pipeline-parallelism, megatron/core/pipeline_parallel/zerobubble/scheduler/zbv.py,
PipelineGraph.try_v_schedule and create_schedule. This is a port of that heuristic (same order of decisions, same
bubble bookkeeping, including Python's end_time[-1] where their code indexes with an id of -1) so that the numbers
the test compares against come from running their algorithm, not from a table typed in by hand. create_schedule
runs try_v_schedule for fill_b, fill_f in {True, False} x {True, False} and keeps the first order with the smallest
largest per-rank bubble; the row written here is that order. Costs: F = I = W = 1, no communication; memory in
(stage, micro-batch) units (F +1, I 0, W -1, their default limit 2p), which is the in-flight count Sluice measures.

Each order is scored with the event simulator below, written for this purpose (not Sluice's): F of stage s after
F of s-1, I of s after I of s+1 (the last stage's I after its F), W after I, one action at a time per rank in list
order. Peak: the most (stage, micro-batch) pairs on one rank between their F and their W, maximum over ranks.

Usage: zbv_reference.py > tests/schedule/reference/zbv_authors.txt
"""
import sys
from collections import deque

F_COST = I_COST = W_COST = 1
COSTS = [F_COST, I_COST, W_COST]
MEMS = [1, 0, -1]  # F holds a (stage, micro-batch) pair, W frees it


class AuthorsAssert(Exception):
    """Their generator hit one of its own asserts: it has no order for this (p, m)."""


def check(condition):
    if not condition:
        raise AuthorsAssert()


class VGraph:
    """Their PipelineGraph for f = b = w = 1, c = 0. Ranks are their 'stages'; cat 0 F, 1 B (= our I), 2 W.
    Their chunk 0 of F is the V's descending arm; chunk 0 of B is the ascending arm's backward."""

    def __init__(self, ranks, micro):
        self.p, self.m = ranks, micro
        self.n_node = 6 * ranks * micro
        self.max_mem = MEMS[0] * ranks * 2

    def node(self, cat, chunk, rank, micro):
        return cat * 2 * self.p * self.m + chunk * self.p * self.m + rank * self.m + micro

    def try_v_schedule(self, fill_f=True, fill_b=True, approved_bubble=None):
        return VTry(self, fill_f, fill_b, approved_bubble).run()


class VTry:
    """One call of try_v_schedule, its closures turned into methods."""

    def __init__(self, g, fill_f, fill_b, approved_bubble):
        p = g.p
        self.g, self.fill_f, self.fill_b = g, fill_f, fill_b
        self.count = [[0] * 6 for _ in range(p)]
        self.end_time = [-1] * g.n_node
        self.cur_time = [0] * p
        self.mem = [0] * p
        self.stage_bubble = [0] * p
        self.pending_w = [deque() for _ in range(p)]
        self.schedule = [[] for _ in range(p)]
        self.approved = approved_bubble if approved_bubble is not None else [-1] * p
        self.max_approved = max(self.approved)

    def max_bubble(self, stage=-1):
        result = max([0] + self.stage_bubble)
        if stage >= 0:
            result = max(result, self.max_approved - self.approved[stage])
        return result

    def put_w(self, stage):
        check(len(self.pending_w[stage]) > 0)
        _, chunk, _ = self.pending_w[stage].popleft()
        self.put(2, chunk, stage)

    def put(self, cat, chunk, stage):
        g, end_time = self.g, self.end_time
        tmp = no_bubble = self.cur_time[stage] + COSTS[cat]
        cnt = self.count[stage][cat * 2 + chunk]
        check(cnt < g.m)
        check(self.mem[stage] + MEMS[cat] <= g.max_mem)
        if cat > 0 or chunk > 0:
            last = cat * 2 + chunk - 1
            if cat < 2:
                check(end_time[g.node(last // 2, last % 2, stage, cnt)] >= 0)
            else:
                check(end_time[g.node(1, chunk, stage, cnt)] >= 0)
        if cat < 2 and chunk == 1 and stage < g.p - 1:
            before = g.node(cat, chunk, stage + 1, cnt)
            check(end_time[before] >= 0)
            tmp = max(tmp, end_time[before] + COSTS[cat])
        if cat < 2 and chunk == 0 and stage > 0:
            before = g.node(cat, chunk, stage - 1, cnt)
            check(end_time[before] >= 0)
            tmp = max(tmp, end_time[before] + COSTS[cat])
        if self.count[stage][0] > 0:
            self.stage_bubble[stage] += tmp - no_bubble
        end_time[g.node(cat, chunk, stage, cnt)] = tmp
        self.cur_time[stage] = tmp
        self.mem[stage] += MEMS[cat]
        self.schedule[stage].append((cat, chunk, cnt))
        if cat == 1:
            self.pending_w[stage].append((2, chunk, cnt))
        self.count[stage][cat * 2 + chunk] += 1

    def warm_up(self):
        g, count = self.g, self.count
        for i in range(g.p):
            self.put(0, 0, i)
        for i in range(g.p - 1, -1, -1):
            if i == g.p - 1:
                self.put(0, 1, i)
                continue
            tmp = self.end_time[g.node(0, 1, i + 1, 0)]
            while (self.mem[i] + MEMS[0] * (2 + i * 2) <= g.max_mem and self.cur_time[i] + F_COST <= tmp
                   and count[i][0] < g.m):
                for j in range(i + 1):
                    self.put(0, 0, j)
            self.put(0, 1, i)
        chunk = 0
        for i in range(1, g.p):
            guard = 0
            while (count[i][0] + count[i][1] < count[i - 1][0] + count[i - 1][1]
                   or count[i][1] <= count[i - 1][1] < g.m):
                guard += 1
                check(guard < 10 * g.m + 10)  # their loop would spin forever here
                for j in range(g.p - 1, i - 1, -1):
                    if count[j][chunk] < g.m:
                        self.put(0, chunk, j)
                chunk = 1 - chunk

    def fill_bubble(self, i, before, fill):
        # end_time[-1] is their Python reading of "no predecessor" (id -1): the list's last entry.
        while self.pending_w[i] and before >= 0 and self.end_time[before] >= self.cur_time[i] + W_COST:
            self.put_w(i)
        if self.pending_w[i] and self.end_time[before] - self.cur_time[i] > self.max_bubble(i) - self.stage_bubble[i]:
            if fill:
                self.put_w(i)

    def backward_ranks(self):
        g, count = self.g, self.count
        b0, b1 = [], []
        for i in range(g.p):
            if count[i][3] >= count[i][2]:
                b0.append(i)
            elif i == g.p - 1:
                b1.append(i)
            elif self.end_time[g.node(1, 1, i + 1, count[i][3])] >= 0 or count[i][2] >= g.m:
                b1.append(i)
            else:
                b0.append(i)
        return [(i, 1) for i in reversed(b1)] + [(i, 0) for i in b0]

    def put_backwards(self):
        g, count = self.g, self.count
        for i in range(g.p):
            while self.mem[i] + MEMS[1] > g.max_mem:
                self.put_w(i)
        for i, chunk in self.backward_ranks():
            before = -1
            if chunk == 1 and i < g.p - 1:
                before = g.node(1, 1, i + 1, count[i][3])
            if chunk == 0 and i > 0:
                before = g.node(1, 0, i - 1, count[i][2])
            self.fill_bubble(i, before, chunk == 1 or self.fill_b)
            self.put(1, chunk, i)

    def forward_item(self, i):
        g, count = self.g, self.count
        if count[i][1] >= count[i][0]:
            return 0
        if i == g.p - 1:
            return 1
        if self.end_time[g.node(0, 1, i + 1, count[i][1])] >= 0:
            return 1
        if count[i][0] < g.m and (i == 0 or self.end_time[g.node(0, 0, i - 1, count[i][0])] >= 0):
            return 0
        return None

    def put_forwards(self):
        g, count = self.g, self.count
        for i in range(g.p):
            if count[i][1] >= g.m:
                continue
            item = self.forward_item(i)
            if item is None:
                continue
            while self.mem[i] + MEMS[0] > g.max_mem:
                self.put_w(i)
            before = -1
            if item == 0 and i > 0:
                before = g.node(0, 0, i - 1, count[i][0])
            if item == 1 and i < g.p - 1:
                before = g.node(0, 1, i + 1, count[i][1])
            self.fill_bubble(i, before, self.fill_f)
            self.put(0, item, i)

    def run(self):
        g = self.g
        self.warm_up()
        for _ in range(2 * g.m):
            self.put_backwards()
            self.put_forwards()
        for i in range(g.p):
            while self.pending_w[i]:
                self.put_w(i)
        max_bubble = self.max_bubble()
        if self.max_approved < 0 or max_bubble < self.max_approved:
            again = g.try_v_schedule(self.fill_f, self.fill_b, approved_bubble=self.stage_bubble)
            if again[2] < max_bubble:
                return again
        return self.schedule, self.end_time, max_bubble


def create_schedule(ranks, micro):
    """Their create_schedule's choice, or None where every try hits one of their asserts."""
    best = None
    for fill_b in (True, False):
        for fill_f in (True, False):
            try:
                order, _, bubble = VGraph(ranks, micro).try_v_schedule(fill_f=fill_f, fill_b=fill_b)
            except AuthorsAssert:
                continue
            if best is None or bubble < best[1]:
                best = (order, bubble)
    return None if best is None else best[0]


def to_actions(ranks, order):
    """Their (cat, chunk, micro) per rank as (kind, stage, micro): their B chunk 0 is the V's ascending arm."""
    actions = []
    for rank, items in enumerate(order):
        stages = (rank, 2 * ranks - 1 - rank)
        row = []
        for cat, chunk, micro in items:
            arm = chunk if cat == 0 else 1 - chunk
            row.append(("FIW"[cat], stages[arm], micro))
        actions.append(row)
    return actions


def simulate(ranks, micro, actions):
    """Independent event simulator: returns (makespan, peak) or raises if the order cannot finish."""
    last = 2 * ranks - 1
    done = {}
    pos = [0] * ranks
    free = [0] * ranks
    inflight = [0] * ranks
    peak = 0
    remaining = sum(len(a) for a in actions)
    while remaining:
        progressed = False
        for rank in range(ranks):
            if pos[rank] == len(actions[rank]):
                continue
            kind, stage, mb = actions[rank][pos[rank]]
            if kind == "F":
                needs = [("F", stage - 1, mb)] if stage > 0 else []
            elif kind == "I":
                needs = [("F", stage, mb)] + ([("I", stage + 1, mb)] if stage < last else [])
            else:
                needs = [("I", stage, mb)]
            if any(n not in done for n in needs):
                continue
            start = max([free[rank]] + [done[n] for n in needs])
            done[(kind, stage, mb)] = free[rank] = start + 1
            inflight[rank] += {"F": 1, "I": 0, "W": -1}[kind]
            peak = max(peak, inflight[rank])
            pos[rank] += 1
            remaining -= 1
            progressed = True
        if not progressed:
            raise RuntimeError("order deadlocks")
    expected = {(k, s, b) for k in "FIW" for s in range(2 * ranks) for b in range(micro)}
    if set(done) != expected:
        raise RuntimeError("order is incomplete")
    return max(free), peak


def grid():
    cases = set()
    for p in (2, 4, 8, 16):
        cases.update((p, m) for m in range(1, 2 * p - 1))
    cases.add((16, 18))
    return sorted(cases)


def main():
    print("# p m makespan peak: the zero-bubble authors' ZB-V (zbv_reference.py), F = I = W = 1, no communication;")
    print("# peak = most (stage, micro-batch) pairs in flight on one rank. Cases their generator cannot order are absent.")
    for p, m in grid():
        order = create_schedule(p, m)
        if order is None:
            print(f"# p={p} m={m}: their generator asserts", file=sys.stderr)
            continue
        makespan, peak = simulate(p, m, to_actions(p, order))
        print(p, m, makespan, peak)


if __name__ == "__main__":
    main()
