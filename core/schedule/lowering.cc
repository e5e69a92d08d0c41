#include "core/schedule/lowering.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <queue>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/common/error.h"
#include "core/schedule/dependency_engine.h"
#include "core/schedule/kind_traits.h"
#include "core/schedule/longest_path.h"
#include "core/schedule/message_calendar.h"
#include "core/schedule/rendezvous_placement.h"
#include "core/schedule/replay.h"
#include "core/schedule/replay_workspace.h"
#include "core/schedule/simulator.h"
#include "core/schedule/skip_lowering.h"

namespace sluice {
namespace schedule {
namespace {

// The lowered schedule's header with each rank's list reserved at its exact final length (compute actions plus
// the SENDs and RECVs it will get), so that the lists are written once, never copied or regrown.
Schedule empty_lowered(const Schedule& compute) {
  std::vector<size_t> lengths(compute.actions.size(), 0);
  for (int rank = 0; rank < static_cast<int>(compute.actions.size()); ++rank) {
    for (const Action& action : compute.actions[rank]) {
      ++lengths[rank];
      detail::PendingMessage message;
      if (!detail::message_after(compute, rank, action, message)) continue;
      ++lengths[rank];
      ++lengths[compute.rank_of(message.send_kind == ActionKind::SEND_F ? action.stage + 1 : action.stage - 1)];
    }
  }
  Schedule lowered;
  lowered.name = compute.name;
  lowered.ranks = compute.ranks;
  lowered.chunks = compute.chunks;
  lowered.microbatches = compute.microbatches;
  lowered.stage_to_rank = compute.stage_to_rank;
  lowered.actions.resize(compute.actions.size());
  for (size_t rank = 0; rank < lengths.size(); ++rank) lowered.actions[rank].reserve(lengths[rank]);
  return lowered;
}

void throw_if_stalled(const Schedule& compute, const detail::DependencyRun& run) {
  if (const auto stall = run.stall())
    throw Error(ErrorCode::kInvalidArgument, "lower(): schedule '" + compute.name + "' cannot run: rank " +
                                                 std::to_string(stall->rank) + ", action " +
                                                 std::to_string(stall->position) + " (" + to_string(stall->action) +
                                                 ") waits forever for " + stall->waiting_for);
}

void throw_if_lowered(const Schedule& compute) {
  if (is_lowered(compute))
    throw Error(ErrorCode::kInvalidArgument,
                "lower(): schedule '" + compute.name + "' already contains SEND/RECV actions");
}

// The compute-only makespan (what simulate() reports) without keeping the timeline. The time-ordered run only
// when the walk gets stuck: it names where.
double compute_only_makespan(const Schedule& compute, const CostModel& costs) {
  if (const auto makespan = detail::longest_path_makespan(compute, costs)) return *makespan;
  detail::DependencyRun run(compute, costs);
  detail::StartedAction started;
  double makespan = 0.0;
  while (run.next(started)) makespan = std::max(makespan, started.end);
  throw_if_stalled(compute, run);
  return makespan;
}

// Lowering's calendar for arbitrary costs: messages in (ready time, creation order), so that ties keep the
// same order on both ends exactly as the unit-cost ring does.
class TimedCalendar {
 public:
  void add(double ready_at, const detail::PendingMessage& message) { heap_.push({ready_at, serial_++, message}); }
  // `place(ready_at, message)` may add messages again (later than `ready_at`).
  template <typename Place>
  void drain_until(double time, Place place) {
    while (!heap_.empty() && heap_.top().ready_at <= time) {
      const Entry top = heap_.top();
      heap_.pop();
      place(top.ready_at, top.message);
    }
  }

 private:
  struct Entry {
    double ready_at;
    size_t serial;
    detail::PendingMessage message;
    bool operator>(const Entry& other) const {
      return ready_at != other.ready_at ? ready_at > other.ready_at : serial > other.serial;
    }
  };
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap_;
  size_t serial_ = 0;
};

// The ring passes no time: the unit-cost path never defers (see below), so it never needs one.
template <typename PlaceAt>
void drain(detail::MessageCalendar& calendar, double time, PlaceAt place_at) {
  calendar.drain_until(time, [&](const detail::PendingMessage& message) { place_at(time, message); });
}
template <typename PlaceAt>
void drain(TimedCalendar& calendar, double time, PlaceAt place_at) {
  calendar.drain_until(time, place_at);
}

// One serialization under `costs`: every message's two ends go in when the run reaches the time its data is
// ready, so each rank posts its RECVs in the order the data will really arrive. With `defer_to_receiver`, a message
// whose receiver is still inside an action at that time goes in when the action ends instead: the RECV could not be
// posted earlier anyway, and placing the pair there keeps it from holding up, in posting order, the messages that
// both ranks get ready meanwhile (the costed ZB-V cases in tests/schedule/replay_test need it).
template <typename Calendar>
Schedule lower_in_time_order(const Schedule& compute, const CostModel& costs, Calendar& pending,
                             bool defer_to_receiver) {
  const bool costed = std::is_same<Calendar, TimedCalendar>::value;  // the unit path stays as the golden files have it
  throw_if_lowered(compute);
  Schedule lowered = empty_lowered(compute);
  std::vector<double> busy_until(compute.actions.size(), 0.0);  // end of each rank's latest started action
  auto place = [&](double ready_at, const detail::PendingMessage& message) {
    const int s = message.stage, m = message.microbatch;
    const bool forward = message.send_kind == ActionKind::SEND_F;
    const int receiver = compute.rank_of(forward ? s + 1 : s - 1);
    const Action recv{forward ? s + 1 : s - 1, forward ? ActionKind::RECV_F : ActionKind::RECV_B, m};
    std::vector<Action>& receiving = lowered.actions[receiver];
    const bool busy = busy_until[receiver] > ready_at;
    if (defer_to_receiver && busy) return pending.add(busy_until[receiver], message);
    lowered.actions[message.sender].push_back({s, message.send_kind, m});
    // A receiver still inside its last action posts the RECV before that action instead of after it, so that the
    // transfer is not held until the action ends. Only across a compute action: the order of the receiver's
    // messages (which both ends of every pair share) stays the same.
    if (costed && busy && !receiving.empty() && is_compute(receiving.back().kind))
      receiving.insert(receiving.end() - 1, recv);
    else
      receiving.push_back(recv);
  };
  const double transfer = transfer_time(costs);
  detail::DependencyRun run(compute, costs);
  detail::StartedAction started;
  while (run.next(started)) {
    drain(pending, started.start, place);
    lowered.actions[started.rank].push_back(started.action);
    busy_until[started.rank] = started.end;
    detail::PendingMessage message;
    // Placed `transfer` before the data is ready (never before its producer): the RECV is then posted in time for
    // the transfer to start when the data is ready, as the compute-only timeline assumes.
    if (detail::message_after(compute, started.rank, started.action, message))
      pending.add(std::max(started.start, started.end - transfer), message);
  }
  throw_if_stalled(compute, run);
  drain(pending, std::numeric_limits<double>::infinity(), place);
  return lowered;
}

// A placement's replays, compared as lower(compute, costs) prefers them. The blocking replay is skipped when the
// posting-order one already decides.
class PlacementScore {
 public:
  PlacementScore(const Schedule& lowered, const CostModel& costs, double ideal)
      : ideal_(ideal), posting_(replays_.makespan(lowered, costs, TransferMode::kPostingOrder)),
        blocking_(replays_.makespan(lowered, costs, TransferMode::kBlocking)) {}

  bool reaches_compute_only() const { return posting_ <= ideal_ && blocking_ <= ideal_; }
  double posting() const { return posting_; }
  double blocking() const { return blocking_; }

  // True (and the candidate's replays become the best ones) if `candidate` is better.
  bool improve(const Schedule& candidate, const CostModel& costs) {
    const double posting = replays_.makespan(candidate, costs, TransferMode::kPostingOrder);
    const bool within = posting <= ideal_ * 1.01, best_within = posting_ <= ideal_ * 1.01;
    if (within != best_within) return within ? take(posting, costs, candidate) : false;
    const double blocking = replays_.makespan(candidate, costs, TransferMode::kBlocking);
    if (std::make_tuple(blocking > ideal_ * 1.01, posting, blocking) <
        std::make_tuple(blocking_ > ideal_ * 1.01, posting_, blocking_))
      return take(posting, blocking);
    return false;
  }

 private:
  bool take(double posting, const CostModel& costs, const Schedule& candidate) {
    return take(posting, replays_.makespan(candidate, costs, TransferMode::kBlocking));
  }
  bool take(double posting, double blocking) {
    posting_ = posting;
    blocking_ = blocking;
    return true;
  }

  detail::ReplayWorkspace replays_;  // first: the initializers below use it
  const double ideal_;
  double posting_, blocking_;
};

// Whether the play's lists replay at the compute-only makespan `ideal` both ways, known without replaying them. The
// play's timeline is one execution of its lists that keeps the blocking rule (each pair at a moment both ranks are
// free) and the posting-order rule (each rank's pairs complete in list order); both replays start every action as
// early as their rule allows, so they end no later than the play (max and + round monotonically). And no replay ends
// before compute only, whose starts wait for nothing but data: with the replays' own (uniform) costs, a play that
// ends by `ideal` replays at exactly `ideal` both ways, as replaying it would find. Per-stage costs time `ideal` by
// other costs than the replays, so there the replays run.
bool play_reaches_compute_only(const CostModel& costs, double ideal, double played_makespan) {
  return costs.per_stage.empty() && played_makespan <= ideal;
}

// lower_and_replay for the main chain's messages (the skips' come after, skip_lowering.h).
CostedLowering lower_chain_and_replay(const Schedule& compute, const CostModel& costs) {
  check_cost_model(costs);
  throw_if_lowered(compute);
  TimedCalendar plain_calendar, deferred_calendar;
  const double ideal = compute_only_makespan(compute, costs);
  if (compute.ranks < 2) {  // nothing to place: one list (replayed for its makespans, which use uniform costs)
    Schedule lowered = lower_in_time_order(compute, costs, plain_calendar, false);
    const double posting = replay_makespan(lowered, costs, TransferMode::kPostingOrder);
    const double blocking = replay_makespan(lowered, costs, TransferMode::kBlocking);
    return {std::move(lowered), ideal, posting, blocking};
  }
  // No placement wins everywhere: the rendezvous play usually reaches the compute-only makespan both ways, but not
  // always; where not, the time-ordered placement (RECVs where the data arrives) or its deferred form (pairs at the
  // receiver's next action boundary: ZB-V's costed cases) may do better in posting order. Prefer the one that keeps
  // posting order (NCCL) within 1% of compute only, then blocking pairs (MPI rendezvous) too, then the shorter
  // posting-order and blocking replays; on a full tie the earlier candidate. Stop at the first that reaches it.
  std::optional<Schedule> best;
  std::optional<PlacementScore> best_score;
  auto consider = [&](Schedule candidate) {
    if (!best) {
      best_score.emplace(candidate, costs, ideal);
      best = std::move(candidate);
    } else if (best_score->improve(candidate, costs)) {
      best = std::move(candidate);
    }
    return best_score->reaches_compute_only();
  };
  auto chosen = [&] { return CostedLowering{std::move(*best), ideal, best_score->posting(), best_score->blocking()}; };
  Schedule played = empty_lowered(compute);
  double played_makespan = 0.0;
  if (detail::place_by_rendezvous(compute, costs, ideal, played, played_makespan)) {
    if (play_reaches_compute_only(costs, ideal, played_makespan)) return {std::move(played), ideal, ideal, ideal};
    if (consider(std::move(played))) return chosen();
  }
  if (consider(lower_in_time_order(compute, costs, plain_calendar, false))) return chosen();
  consider(lower_in_time_order(compute, costs, deferred_calendar, true));
  return chosen();
}

}  // namespace

Schedule lower(const Schedule& compute) {
  const CostModel unit_costs;  // unit costs: whole-number times, so the ring calendar applies (fast at p=512)
  // Messages become ready when their producer ends, at most the longest action (a fused B: 2) after it starts.
  detail::MessageCalendar pending(2);
  Schedule lowered = lower_in_time_order(compute, unit_costs, pending, false);
  detail::add_skip_messages(lowered, compute.skips);
  return lowered;
}

Schedule lower(const Schedule& compute, const CostModel& costs) { return lower_and_replay(compute, costs).lowered; }

CostedLowering lower_and_replay(const Schedule& compute, const CostModel& costs) {
  CostedLowering result = lower_chain_and_replay(compute, costs);
  if (compute.skips.empty()) return result;
  detail::add_skip_messages(result.lowered, compute.skips);
  // The placement was chosen for the chain; the makespans reported are those of the lists with their skips.
  result.posting_order = replay_makespan(result.lowered, costs, TransferMode::kPostingOrder);
  result.blocking = replay_makespan(result.lowered, costs, TransferMode::kBlocking);
  return result;
}

}  // namespace schedule
}  // namespace sluice
