// Predicts a schedule's timeline from per-action costs: makespan, bubble, per-rank busy/idle and peak
// in-flight micro-batches. With F = I = W = 1 and no latency it reproduces the literature's closed forms.
#pragma once

#include <vector>

#include "core/schedule/action.h"
#include "core/schedule/cost_model.h"
#include "core/schedule/schedule.h"

namespace sluice {
namespace schedule {

struct TimedAction {
  Action action;
  double start = 0.0;
  double end = 0.0;
};

struct SimulationResult {
  double makespan = 0.0;
  std::vector<double> busy;  // per rank: sum of compute durations
  std::vector<double> idle;  // per rank: makespan - busy
  double bubble_fraction = 0.0;  // 1 - sum(busy) / (ranks * makespan)
  std::vector<int> peak_inflight;
  std::vector<std::vector<TimedAction>> timeline;  // per rank, compute actions in execution order
};

// In-flight (stage, micro-batch) pairs on a rank: F has run, the last backward piece (B, or W when split) has
// not. Returns the maximum over each rank's list; the executor measures its activation stash the same way.
std::vector<int> peak_inflight(const Schedule& schedule);

// The same walk weighted by stage: a (stage, micro-batch) pair holds `stash_per_stage[stage]` (bytes, or any unit)
// from its F to its last backward piece. Returns each rank's largest total: the activation memory a schedule
// needs when stages stash different amounts (uneven splits, recomputation). With split backward a stage may free
// part of its stash at I already, so this is an upper bound there. Throws Error(kInvalidArgument) unless
// there is one entry per stage.
std::vector<double> peak_stash(const Schedule& schedule, const std::vector<double>& stash_per_stage);

// Simulates the compute actions (SEND/RECV are implied by data dependencies and cost `transfer_time`).
// Throws sluice::Error(kInvalidArgument) if the costs are invalid or the schedule cannot finish; run
// validate() first for a precise diagnosis of malformed schedules.
SimulationResult simulate(const Schedule& schedule, const CostModel& costs = CostModel{});

}  // namespace schedule
}  // namespace sluice
