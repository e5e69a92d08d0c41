// Turns what the executor measured (busy seconds per compute kind, summed over ranks) into the simulator's
// per-action CostModel, so the simulated bubble is the one the schedule would have with exactly the measured
// F / I / W durations. No MPI here: the caller gathers the per-rank numbers.
#pragma once

#include <array>
#include <vector>

#include "core/runtime/step_counters.h"
#include "core/schedule/cost_model.h"
#include "core/schedule/schedule.h"

namespace sluice::runtime {

// Number of compute actions of each kind (indexed by ComputeKind) in the whole schedule.
using KindCounts = std::array<int, kNumComputeKinds>;
using KindSeconds = std::array<double, kNumComputeKinds>;

KindCounts count_compute_actions(const schedule::Schedule& schedule);

// Per-action costs from `busy` (seconds per kind, summed over all ranks of one step) and the schedule's counts:
//   forward           = busy F / #F
//   a backward pair   = (busy B + busy I + busy W) / (#B + #I), i.e. all backward time spread over the
//                       micro-batch-chunks it served, so no measured time is dropped;
//   backward_input / backward_weight split that pair cost in the measured I:W ratio when the schedule has
//                       split actions, else backward_input = B and backward_weight = 0 (the simulator costs a
//                       fused B as I + W, so this feeds B directly).
// `latency` is the one-way time of one activation message. Throws sluice::Error(kInvalidArgument) naming the
// kind if the schedule has no F or no backward, or I and W counts differ.
schedule::CostModel costs_from_busy(const KindSeconds& busy, const KindCounts& counts, double latency);

// Median of `values` (the mean of the middle two for an even count). Throws sluice::Error(kInvalidArgument)
// naming `what` if `values` is empty.
double median(std::vector<double> values, const char* what);

}  // namespace sluice::runtime
