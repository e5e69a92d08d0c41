// Internal: the one dependency-driven run of a schedule's compute actions that the simulator, the lowering
// pass and the validator's dry run share. Each rank runs its list in order; an action starts when the rank is
// free and the data it needs has arrived (plus the transfer time when it comes from another rank).
// Actions are reported in nondecreasing start time, which gives lowering its global serialization.
// SEND/RECV actions in the input are skipped: data dependencies are implied by the compute actions.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "core/schedule/cost_model.h"
#include "core/schedule/schedule.h"

namespace sluice {
namespace schedule {
namespace detail {

struct StartedAction {
  int rank;
  size_t position;  // index in the rank's list (including any SEND/RECV)
  Action action;
  double start;
  double end;
};

// Where the run got stuck: a rank whose next action waits for data that is never produced.
struct Stall {
  int rank;
  size_t position;
  Action action;
  std::string waiting_for;  // e.g. "1F3"
};

// Expects stages/micro-batches in range (the validator's static checks guarantee it).
// Returns the first stalled rank if the run cannot finish.
std::optional<Stall> run_dependencies(const Schedule& schedule, const CostModel& costs,
                                      const std::function<void(const StartedAction&)>& on_start);

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
