// Internal: the one dependency-driven run of a schedule's compute actions that the simulator, the lowering
// pass and the validator's dry run share. Each rank runs its list in order; an action starts when the rank is
// free and the data it needs has arrived (plus the transfer time when it comes from another rank).
// Actions come out in nondecreasing start time, which gives lowering its global serialization.
// SEND/RECV actions in the input are skipped: data dependencies are implied by the compute actions.
#pragma once

#include <cstddef>
#include <memory>
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

// Pull-style, so the callers' per-action work inlines into their own loops instead of going through a
// std::function per action. Expects stages/micro-batches in range (the validator's static checks guarantee it)
// and `schedule` to outlive the run.
class DependencyRun {
 public:
  DependencyRun(const Schedule& schedule, const CostModel& costs);
  ~DependencyRun();
  DependencyRun(const DependencyRun&) = delete;
  DependencyRun& operator=(const DependencyRun&) = delete;

  // Fills `started` with the next action to start; false once no rank can start anything.
  bool next(StartedAction& started);
  // After next() returned false: the first stalled rank, or nothing when every list ran to its end.
  std::optional<Stall> stall() const;

 private:
  class Engine;
  std::unique_ptr<Engine> engine_;
};

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
