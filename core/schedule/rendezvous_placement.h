// Internal: a SEND/RECV placement for blocking (rendezvous) transports. Both ends of a message block until the other
// arrives, so a pair costs nothing only where both ranks are between actions at the same moment, and in tight
// schedules (interleaved 1F1B) the compute-only timeline often has no such moment between a message's producer and
// its consumer. This placement plays the step out under the blocking rule itself and, where a sender reaches a
// message before its receiver is free, lets the one with more slack (latest_start.h) wait.
#pragma once

#include "core/schedule/cost_model.h"
#include "core/schedule/schedule.h"

namespace sluice {
namespace schedule {
namespace detail {

// Fills `lowered` (the header and reserved, empty lists lowering builds) from the compute-only `compute`, whose
// compute-only makespan under `costs` is `makespan`, and sets `played_makespan` to when the play itself ended (its
// timeline is one blocking execution of `lowered`; uniform costs). Returns false (and leaves `lowered` unusable) only
// if the play got stuck, which a compute schedule that runs never does.
bool place_by_rendezvous(const Schedule& compute, const CostModel& costs, double makespan, Schedule& lowered,
                         double& played_makespan);

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
