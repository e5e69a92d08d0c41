#include "core/schedule/lowering.h"

#include <cstdint>
#include <limits>
#include <algorithm>
#include <vector>

#include "core/common/error.h"
#include "core/schedule/dependency_engine.h"

namespace sluice {
namespace schedule {
namespace {

struct Message {
  int sender;
  int receiver;
  Action send;
  Action receive;
};

// Messages waiting to be placed, keyed by the whole-number time at which the data is ready (lowering runs
// with unit costs). Within one time step they keep creation order, identically for both ends.
class MessageCalendar {
 public:
  void add(double ready_at, const Message& message) {
    const size_t slot = static_cast<size_t>(ready_at);
    if (slot >= slots_.size()) slots_.resize(std::max(slot + 1, 2 * slots_.size()));
    slots_[slot].push_back(message);
  }
  // Calls `place` for every message ready at or before `time`, in time order.
  template <typename Place>
  void drain_until(double time, Place place) {
    while (next_ < slots_.size() && static_cast<double>(next_) <= time) {
      for (const Message& message : slots_[next_]) place(message);
      std::vector<Message>().swap(slots_[next_]);
      ++next_;
    }
  }

 private:
  std::vector<std::vector<Message>> slots_;
  size_t next_ = 0;
};

}  // namespace

Schedule lower(const Schedule& compute) {
  if (is_lowered(compute))
    throw Error(ErrorCode::kInvalidArgument,
                "lower(): schedule '" + compute.name + "' already contains SEND/RECV actions");
  Schedule lowered = compute;
  for (size_t rank = 0; rank < lowered.actions.size(); ++rank) {
    lowered.actions[rank].clear();
    lowered.actions[rank].reserve(compute.actions[rank].size() * 2);
  }
  MessageCalendar pending;
  auto place_messages_until = [&](double time) {
    pending.drain_until(time, [&](const Message& message) {
      lowered.actions[message.sender].push_back(message.send);
      lowered.actions[message.receiver].push_back(message.receive);
    });
  };
  const int last_stage = compute.num_stages() - 1;
  const CostModel unit_costs;  // any positive costs give a valid serialization; unit costs match the planner
  const auto stall = detail::run_dependencies(compute, unit_costs, [&](const detail::StartedAction& started) {
    place_messages_until(started.start);
    lowered.actions[started.rank].push_back(started.action);
    const Action& action = started.action;
    const int s = action.stage, m = action.microbatch;
    if (action.kind == ActionKind::F && s < last_stage && compute.rank_of(s + 1) != started.rank) {
      pending.add(started.end, {started.rank, compute.rank_of(s + 1), {s, ActionKind::SEND_F, m},
                                {s + 1, ActionKind::RECV_F, m}});
    } else if ((action.kind == ActionKind::B || action.kind == ActionKind::I) && s > 0 &&
               compute.rank_of(s - 1) != started.rank) {
      pending.add(started.end, {started.rank, compute.rank_of(s - 1), {s, ActionKind::SEND_B, m},
                                {s - 1, ActionKind::RECV_B, m}});
    }
  });
  if (stall)
    throw Error(ErrorCode::kInvalidArgument, "lower(): schedule '" + compute.name + "' cannot run: rank " +
                                                 std::to_string(stall->rank) + ", action " +
                                                 std::to_string(stall->position) + " (" + to_string(stall->action) +
                                                 ") waits forever for " + stall->waiting_for);
  place_messages_until(std::numeric_limits<double>::infinity());
  return lowered;
}

}  // namespace schedule
}  // namespace sluice
