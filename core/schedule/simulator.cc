#include "core/schedule/simulator.h"

#include <algorithm>

#include "core/common/error.h"
#include "core/schedule/dependency_engine.h"

namespace sluice {
namespace schedule {

std::vector<int> peak_inflight(const Schedule& schedule) {
  std::vector<int> peaks(schedule.actions.size(), 0);
  for (size_t rank = 0; rank < schedule.actions.size(); ++rank) {
    int inflight = 0;
    for (const Action& action : schedule.actions[rank]) {
      if (action.kind == ActionKind::F) {
        peaks[rank] = std::max(peaks[rank], ++inflight);
      } else if (action.kind == ActionKind::B || action.kind == ActionKind::W) {
        --inflight;
      }
    }
  }
  return peaks;
}

std::vector<double> peak_stash(const Schedule& schedule, const std::vector<double>& stash_per_stage) {
  if (stash_per_stage.size() != static_cast<size_t>(schedule.num_stages()))
    throw Error(ErrorCode::kInvalidArgument, "peak_stash: " + std::to_string(stash_per_stage.size()) +
                                                 " stash sizes for " + std::to_string(schedule.num_stages()) +
                                                 " stages");
  std::vector<double> peaks(schedule.actions.size(), 0.0);
  for (size_t rank = 0; rank < schedule.actions.size(); ++rank) {
    double held = 0.0;
    for (const Action& action : schedule.actions[rank]) {
      if (action.kind == ActionKind::F) {
        held += stash_per_stage[action.stage];
        peaks[rank] = std::max(peaks[rank], held);
      } else if (action.kind == ActionKind::B || action.kind == ActionKind::W) {
        held -= stash_per_stage[action.stage];
      }
    }
  }
  return peaks;
}

SimulationResult simulate(const Schedule& schedule, const CostModel& costs) {
  check_cost_model(costs);
  SimulationResult result;
  result.busy.assign(schedule.ranks, 0.0);
  result.timeline.resize(schedule.ranks);
  detail::DependencyRun run(schedule, costs);
  detail::StartedAction started;
  while (run.next(started)) {
    result.timeline[started.rank].push_back({started.action, started.start, started.end});
    result.busy[started.rank] += started.end - started.start;
    result.makespan = std::max(result.makespan, started.end);
  }
  const auto stall = run.stall();
  if (stall)
    throw Error(ErrorCode::kInvalidArgument, "cannot simulate schedule '" + schedule.name + "': rank " +
                                                 std::to_string(stall->rank) + ", action " +
                                                 std::to_string(stall->position) + " (" + to_string(stall->action) +
                                                 ") waits forever for " + stall->waiting_for);
  double total_idle = 0.0;
  for (int rank = 0; rank < schedule.ranks; ++rank) {
    result.idle.push_back(result.makespan - result.busy[rank]);
    total_idle += result.idle.back();
  }
  // 1 - sum(busy) / (ranks * makespan), written as idle / total so integer costs give the exact rational.
  result.bubble_fraction = result.makespan > 0.0 ? total_idle / (schedule.ranks * result.makespan) : 0.0;
  result.peak_inflight = peak_inflight(schedule);
  return result;
}

}  // namespace schedule
}  // namespace sluice
