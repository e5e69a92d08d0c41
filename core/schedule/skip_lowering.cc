#include "core/schedule/skip_lowering.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "core/common/error.h"
#include "core/schedule/rendezvous_dry_run.h"

namespace sluice {
namespace schedule {
namespace detail {
namespace {

// One skip message's end on one rank: it goes before the first action of that rank whose tick is `tick` or later;
// `order` keeps messages of equal tick in one order on both ranks.
struct Insertion {
  long tick;
  size_t order;
  Action action;
};

// One order in which a blocking run of `lowered` completes: per rank, per position, the number of events (a compute
// action, or a SEND and its RECV together) completed before that action's. The ranks advance in turns of at most
// one action each, so the order follows the ranks' progress roughly as time does (a rank that runs ahead alone
// would put every message it meets late on the other ranks).
std::vector<std::vector<long>> serialization(const Schedule& lowered) {
  std::vector<std::vector<long>> ticks(lowered.ranks);
  for (int rank = 0; rank < lowered.ranks; ++rank) ticks[rank].assign(lowered.actions[rank].size(), -1);
  std::vector<size_t> position(lowered.ranks, 0);
  long completed = 0;
  std::vector<char> moved_this_turn(lowered.ranks);
  for (bool moved = true; moved;) {
    moved = false;
    std::fill(moved_this_turn.begin(), moved_this_turn.end(), 0);
    for (int rank = 0; rank < lowered.ranks; ++rank) {
      const auto& list = lowered.actions[rank];
      if (position[rank] >= list.size() || moved_this_turn[rank]) continue;  // done, or met by a peer this turn
      const Action& action = list[position[rank]];
      if (is_compute(action.kind)) {
        ticks[rank][position[rank]++] = completed++;
        moved = true;
        continue;
      }
      const Action partner = counterpart(action);
      const int peer = lowered.rank_of(partner.stage);
      if (position[peer] >= lowered.actions[peer].size() || lowered.actions[peer][position[peer]] != partner) continue;
      ticks[rank][position[rank]++] = completed;
      ticks[peer][position[peer]++] = completed++;
      moved_this_turn[peer] = 1;
      moved = true;
    }
  }
  for (int rank = 0; rank < lowered.ranks; ++rank)
    if (position[rank] < lowered.actions[rank].size())
      throw Error(ErrorCode::kInternal, "lower(): the chain's lists stop at rank " + std::to_string(rank) +
                                            ", action " + std::to_string(position[rank]));
  return ticks;
}

void check_skips(const Schedule& schedule, const std::vector<SkipEdge>& skips) {
  for (const SkipEdge& skip : skips)
    if (skip.from < 0 || skip.from >= skip.to || skip.to >= schedule.num_stages())
      throw Error(ErrorCode::kInvalidArgument,
                  "lower(): skip " + to_string(skip) + " of schedule '" + schedule.name +
                      "' must go from an earlier stage to a later one, both in 0.." +
                      std::to_string(schedule.num_stages() - 1));
}

// Where each micro-batch's F and backward (B or I) of `stage` sit in its rank's list; -1 where none runs.
struct StagePositions {
  std::vector<long> forward, backward;
};

StagePositions positions_of(const Schedule& schedule, int stage) {
  StagePositions at{std::vector<long>(schedule.microbatches, -1), std::vector<long>(schedule.microbatches, -1)};
  const auto& list = schedule.actions[schedule.rank_of(stage)];
  for (size_t i = 0; i < list.size(); ++i) {
    const Action& a = list[i];
    if (a.stage != stage || a.microbatch < 0 || a.microbatch >= schedule.microbatches) continue;
    if (a.kind == ActionKind::F) at.forward[a.microbatch] = static_cast<long>(i);
    if (a.kind == ActionKind::B || a.kind == ActionKind::I) at.backward[a.microbatch] = static_cast<long>(i);
  }
  return at;
}

// Each rank's list with its insertions merged in: an insertion goes before the first action whose tick is its own
// or later.
void merge(Schedule& lowered, const std::vector<std::vector<long>>& ticks,
           std::vector<std::vector<Insertion>>& insertions) {
  for (int rank = 0; rank < lowered.ranks; ++rank) {
    auto& mine = insertions[rank];
    if (mine.empty()) continue;
    std::sort(mine.begin(), mine.end(), [](const Insertion& a, const Insertion& b) {
      return std::tie(a.tick, a.order) < std::tie(b.tick, b.order);
    });
    const std::vector<Action>& old = lowered.actions[rank];
    std::vector<Action> merged;
    merged.reserve(old.size() + mine.size());
    size_t next = 0;
    for (size_t i = 0; i < old.size(); ++i) {
      while (next < mine.size() && mine[next].tick <= ticks[rank][i]) merged.push_back(mine[next++].action);
      merged.push_back(old[i]);
    }
    while (next < mine.size()) merged.push_back(mine[next++].action);
    lowered.actions[rank] = std::move(merged);
  }
}

}  // namespace

void add_skip_messages(Schedule& lowered, const std::vector<SkipEdge>& skips) {
  check_skips(lowered, skips);
  lowered.skips = skips;
  std::vector<SkipEdge> crossing;
  for (const SkipEdge& skip : skips)
    if (crosses_ranks(lowered, skip)) crossing.push_back(skip);
  if (crossing.empty()) return;
  const std::vector<std::vector<long>> ticks = serialization(lowered);
  std::vector<std::vector<Insertion>> insertions(lowered.ranks);
  size_t order = 0;
  // Both ends of one message, just before the action at `anchor` of `anchor_stage`'s rank.
  auto place = [&](int anchor_stage, long anchor, const Action& send, const Action& receive) {
    const long tick = ticks[lowered.rank_of(anchor_stage)][anchor];
    insertions[lowered.rank_of(send.stage)].push_back({tick, order, send});
    insertions[lowered.rank_of(receive.stage)].push_back({tick, order, receive});
    ++order;
  };
  for (const SkipEdge& skip : crossing) {
    const StagePositions producer = positions_of(lowered, skip.from), reader = positions_of(lowered, skip.to);
    for (int m = 0; m < lowered.microbatches; ++m) {
      if (reader.forward[m] >= 0)
        place(skip.to, reader.forward[m], {skip.from, ActionKind::SEND_SKIP, m, skip.to},
              {skip.to, ActionKind::RECV_SKIP, m, skip.from});
      if (reader.backward[m] >= 0 && producer.backward[m] >= 0)  // none in a forward-only list
        place(skip.from, producer.backward[m], {skip.to, ActionKind::SEND_SKIP_GRAD, m, skip.from},
              {skip.from, ActionKind::RECV_SKIP_GRAD, m, skip.to});
    }
  }
  merge(lowered, ticks, insertions);
}

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
