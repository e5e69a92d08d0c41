#include "core/schedule/rendezvous_placement.h"

#include <algorithm>
#include <vector>

#include "core/schedule/blocked_table.h"
#include "core/schedule/kind_traits.h"
#include "core/schedule/latest_start.h"
#include "core/schedule/message_calendar.h"
#include "core/schedule/rank_wakeups.h"
#include "core/schedule/ready_queue.h"

namespace sluice {
namespace schedule {
namespace detail {
namespace {

// Every rank runs its compute list in order. A rank between actions first exchanges every produced message whose
// other end is also between actions (both lists get the pair at the same point, so every rank sees its pairs in
// one global order and the result cannot deadlock), then starts its next action if its input has arrived, unless
// a receiver it owes data to is busy and waiting for that receiver costs the step less than making it wait.
class Play {
 public:
  Play(const Schedule& compute, const CostModel& costs, const LatestStarts& latest, Schedule& lowered)
      : compute_(compute), costs_(costs), latest_(latest), lowered_(lowered), transfer_(transfer_time(costs)),
        open_(compute.ranks), clock_(compute.ranks, 0.0), position_(compute.ranks, 0),
        arrived_(table_size(compute), 0),
        wakeups_(compute.ranks,
                 transfer_ == 0.0 ? time_step({costs.forward, costs.backward_input, costs.backward_weight}) : 0.0,
                 std::max({costs.forward, costs.backward_input + costs.backward_weight})) {}

  // `makespan`: when the last rank's last action or exchange ends.
  bool run(double& makespan) {
    for (int rank = 0; rank < compute_.ranks; ++rank) wakeups_.push(0.0, rank);
    double time = 0.0;
    int rank = 0;
    while (wakeups_.pop(time, rank)) step(rank, std::max(time, clock_[rank]));
    makespan = 0.0;
    for (int rank = 0; rank < compute_.ranks; ++rank) {
      if (position_[rank] < compute_.actions[rank].size() || !open_[rank].empty()) return false;
      makespan = std::max(makespan, clock_[rank]);
    }
    return true;
  }

 private:
  struct Open {
    PendingMessage message;
    int receiver;
  };

  // By message; rows are (stage, direction): blocked_table.h.
  static size_t table_size(const Schedule& compute) {
    return blocked_table_size(2 * compute.num_stages(), compute.microbatches);
  }
  size_t key(const PendingMessage& m) const {
    const size_t row = static_cast<size_t>(m.stage) * 2 + (m.send_kind == ActionKind::SEND_F ? 0 : 1);
    return blocked_index(row, 2 * static_cast<size_t>(compute_.num_stages()), m.microbatch);
  }
  // The message `a` (on `rank`) needs from another rank, or false when its input is local.
  bool input_of(int rank, const Action& a, size_t& input) const {
    const int m = a.microbatch;
    if (a.kind == ActionKind::F && a.stage > 0 && compute_.rank_of(a.stage - 1) != rank) {
      input = key({0, a.stage - 1, m, ActionKind::SEND_F});
      return true;
    }
    if (produces_input_gradient(a.kind) && a.stage + 1 < compute_.num_stages() &&
        compute_.rank_of(a.stage + 1) != rank) {
      input = key({0, a.stage + 1, m, ActionKind::SEND_B});
      return true;
    }
    return false;
  }
  Action consumer_of(const PendingMessage& m) const {
    return m.send_kind == ActionKind::SEND_F ? Action{m.stage + 1, ActionKind::F, m.microbatch}
                                             : Action{m.stage - 1, ActionKind::B, m.microbatch};
  }
  void requeue(int rank) { wakeups_.push(clock_[rank], rank); }

  // Exchanges, at `time`, every open message of `rank` whose other end is between actions by then.
  double exchange_ready(int rank, double time) {
    for (size_t i = 0; i < open_[rank].size();) {
      const Open open = open_[rank][i];
      const int peer = open.message.sender == rank ? open.receiver : open.message.sender;
      if (clock_[peer] > time) {
        ++i;
        continue;
      }
      const PendingMessage& m = open.message;
      const bool forward = m.send_kind == ActionKind::SEND_F;
      lowered_.actions[m.sender].push_back({m.stage, m.send_kind, m.microbatch});
      lowered_.actions[open.receiver].push_back(
          {forward ? m.stage + 1 : m.stage - 1, forward ? ActionKind::RECV_F : ActionKind::RECV_B, m.microbatch});
      arrived_[key(m)] = 1;
      time += transfer_;
      clock_[rank] = clock_[peer] = time;
      open_[rank].erase(open_[rank].begin() + static_cast<long>(i));
      auto& theirs = open_[peer];
      theirs.erase(std::find_if(theirs.begin(), theirs.end(), [&](const Open& o) { return key(o.message) == key(m); }));
      requeue(peer);
      i = 0;  // time moved on: peers seen busy before may be free now
    }
    return time;
  }

  // Whether `rank`, ready to start `next` at `time`, should first wait for a busy receiver it owes data to; if so
  // `until` is when the earliest of them gets free.
  bool should_wait(int rank, const Action& next, double time, double& until) const {
    double compute_late = 0.0;
    until = -1.0;
    for (const Open& open : open_[rank]) {
      if (open.message.sender != rank) continue;
      const double receiver_free = clock_[open.receiver];
      until = until < 0.0 ? receiver_free : std::min(until, receiver_free);
      const double arrives = time + compute_cost(costs_, next.kind) + transfer_;
      compute_late = std::max(compute_late, arrives - latest_.of(consumer_of(open.message)));
    }
    if (until < 0.0 || compute_late <= 0.0) return false;
    const double wait_late = until + transfer_ - latest_.of(next);
    return wait_late < compute_late;
  }

  // The play hops between hundreds of ranks' lists, more streams than the hardware prefetcher follows: fetch the
  // rank's next compute actions and the end of its lowered list a round of ranks before they are needed.
  void prefetch_ahead(int rank, const std::vector<Action>& list) const {
    constexpr size_t kActionsAhead = 16;
    if (position_[rank] + kActionsAhead < list.size()) __builtin_prefetch(&list[position_[rank] + kActionsAhead]);
    const std::vector<Action>& out = lowered_.actions[rank];
    if (out.size() + kActionsAhead < out.capacity()) __builtin_prefetch(out.data() + out.size() + kActionsAhead, 1);
  }

  void step(int rank, double time) {
    time = exchange_ready(rank, time);
    clock_[rank] = time;
    const auto& list = compute_.actions[rank];
    if (position_[rank] >= list.size()) return;  // only messages left: their receivers come to this rank
    const Action& next = list[position_[rank]];
    prefetch_ahead(rank, list);
    size_t input = 0;
    if (input_of(rank, next, input) && !arrived_[input]) return;  // its sender exchanges with it when free
    double until = 0.0;
    if (should_wait(rank, next, time, until)) {
      wakeups_.push(until, rank);
      return;
    }
    lowered_.actions[rank].push_back(next);
    ++position_[rank];
    clock_[rank] = time + compute_cost(costs_, next.kind);
    PendingMessage message;
    if (message_after(compute_, rank, next, message)) {
      const int receiver = compute_.rank_of(message.send_kind == ActionKind::SEND_F ? next.stage + 1 : next.stage - 1);
      open_[rank].push_back({message, receiver});
      open_[receiver].push_back({message, receiver});
      // The receiver may have been idle for many rounds: its list's end is cold by the time the pair goes in.
      const std::vector<Action>& theirs = lowered_.actions[receiver];
      __builtin_prefetch(theirs.data() + theirs.size(), 1);
    }
    requeue(rank);
  }

  const Schedule& compute_;
  const CostModel costs_;
  const LatestStarts& latest_;
  Schedule& lowered_;
  const double transfer_;
  std::vector<std::vector<Open>> open_;  // per rank: produced, not yet exchanged messages it is an end of
  std::vector<double> clock_;            // when the rank is next between actions
  std::vector<size_t> position_;
  std::vector<char> arrived_;  // by message
  // Every push is at most the longest action past the time being played when transfers cost nothing (a rank's
  // clock is at most its running action's end), so the ring applies there; with transfers, exchanges move clocks
  // on by a transfer each, without a fixed bound, and the queue is a heap.
  RankWakeups wakeups_;
};

}  // namespace

bool place_by_rendezvous(const Schedule& compute, const CostModel& costs, double makespan, Schedule& lowered,
                         double& played_makespan) {
  const LatestStarts latest(compute, costs, makespan);
  return Play(compute, costs, latest, lowered).run(played_makespan);
}

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
