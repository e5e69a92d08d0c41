// Internal: the compute-only makespan (what simulate() reports) as a longest path, without the time-ordered run.
// Every action's start is max(its rank's previous end, each input's end plus the transfer when it crosses ranks),
// the same formula the dependency run applies, so the order in which actions are evaluated does not change any
// result; only lowering needs the time order. Walking each rank as far as its inputs are known (as the latest-start
// table walks backward) skips the run's queue of wake-ups, which at p = 512 was most of its cost.
#pragma once

#include <optional>

#include "core/schedule/cost_model.h"
#include "core/schedule/schedule.h"

namespace sluice {
namespace schedule {
namespace detail {

// The compute-only makespan of the compute-only `compute` under `costs` (per-stage costs included), equal to the
// last end of a DependencyRun bit for bit; nothing when some rank never finishes or the per-stage table does not
// match the stages (the dependency run then says what is wrong). `compute` holds no SEND/RECV (lowering checks
// that first): the walk does not skip them.
std::optional<double> longest_path_makespan(const Schedule& compute, const CostModel& costs);

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
