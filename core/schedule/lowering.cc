#include "core/schedule/lowering.h"

#include <limits>
#include <vector>

#include "core/common/error.h"
#include "core/schedule/dependency_engine.h"
#include "core/schedule/kind_traits.h"
#include "core/schedule/message_calendar.h"

namespace sluice {
namespace schedule {
namespace {

// The hand-over `action` (run on `rank`) starts, as its SEND end; false when the data stays on the rank.
bool message_after(const Schedule& compute, int rank, const Action& action, detail::PendingMessage& message) {
  const int s = action.stage;
  if (action.kind == ActionKind::F && s < compute.num_stages() - 1 && compute.rank_of(s + 1) != rank) {
    message = {rank, s, action.microbatch, ActionKind::SEND_F};
    return true;
  }
  if (detail::produces_input_gradient(action.kind) && s > 0 && compute.rank_of(s - 1) != rank) {
    message = {rank, s, action.microbatch, ActionKind::SEND_B};
    return true;
  }
  return false;
}

// The lowered schedule's header with each rank's list reserved at its exact final length (compute actions plus
// the SENDs and RECVs it will get), so that the lists are written once, never copied or regrown.
Schedule empty_lowered(const Schedule& compute) {
  std::vector<size_t> lengths(compute.actions.size(), 0);
  for (int rank = 0; rank < static_cast<int>(compute.actions.size()); ++rank) {
    for (const Action& action : compute.actions[rank]) {
      ++lengths[rank];
      detail::PendingMessage message;
      if (!message_after(compute, rank, action, message)) continue;
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

}  // namespace

Schedule lower(const Schedule& compute) {
  if (is_lowered(compute))
    throw Error(ErrorCode::kInvalidArgument,
                "lower(): schedule '" + compute.name + "' already contains SEND/RECV actions");
  Schedule lowered = empty_lowered(compute);
  const CostModel unit_costs;  // any positive costs give a valid serialization; unit costs match the planner
  // Messages become ready when their producer ends, at most the longest action (a fused B: 2) after it starts.
  detail::MessageCalendar pending(2);
  auto place = [&](const detail::PendingMessage& message) {
    const int s = message.stage, m = message.microbatch;
    lowered.actions[message.sender].push_back({s, message.send_kind, m});
    if (message.send_kind == ActionKind::SEND_F)
      lowered.actions[compute.rank_of(s + 1)].push_back({s + 1, ActionKind::RECV_F, m});
    else
      lowered.actions[compute.rank_of(s - 1)].push_back({s - 1, ActionKind::RECV_B, m});
  };
  detail::DependencyRun run(compute, unit_costs);
  detail::StartedAction started;
  while (run.next(started)) {
    pending.drain_until(started.start, place);
    lowered.actions[started.rank].push_back(started.action);
    detail::PendingMessage message;
    if (message_after(compute, started.rank, started.action, message)) pending.add(started.end, message);
  }
  if (const auto stall = run.stall())
    throw Error(ErrorCode::kInvalidArgument, "lower(): schedule '" + compute.name + "' cannot run: rank " +
                                                 std::to_string(stall->rank) + ", action " +
                                                 std::to_string(stall->position) + " (" + to_string(stall->action) +
                                                 ") waits forever for " + stall->waiting_for);
  pending.drain_until(std::numeric_limits<double>::infinity(), place);
  return lowered;
}

}  // namespace schedule
}  // namespace sluice
