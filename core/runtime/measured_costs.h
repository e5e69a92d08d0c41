// Turns what the executor measured (busy seconds per compute kind, summed over ranks) into the simulator's
// per-action CostModel, so the simulated bubble is the one the schedule would have with exactly the measured
// F / I / W durations. No MPI here: the caller gathers the per-rank numbers.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "core/runtime/step_counters.h"
#include "core/schedule/cost_model.h"
#include "core/schedule/cost_profile.h"
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

// The same per virtual stage (index = stage), for CostModel::per_stage: each stage's actions of each kind, and
// costs_from_busy's split applied to each stage's own busy seconds (summed over its replicas, like `busy` above).
// Throws as costs_from_busy does, naming the stage.
std::vector<KindCounts> count_compute_actions_per_stage(const schedule::Schedule& schedule);
std::vector<schedule::StageCost> stage_costs_from_busy(const std::vector<KindSeconds>& busy,
                                                       const std::vector<KindCounts>& counts);

// The second micro-batch count a profiling run measures at, so that a per-action fixed cost can be told apart from
// the cost per row: the divisor of `batch` (rows per replica) other than `microbatches` closest (by ratio) to 8x
// `microbatches`, i.e. micro-batches of about 1/8 the rows; when the configured micro-batches already have one row,
// closest to 1/8 of `microbatches` (about 8x the rows). 0 when `batch` has no other divisor (one row per replica).
int second_microbatch_count(int batch, int microbatches);

// What one step measured: its per-action costs (costs_from_busy) at `rows` rows per micro-batch.
struct MeasuredPoint {
  schedule::CostModel costs;
  double rows = 0;
};

// Fits cost = a + b x rows per action (the profile stores S times a and b: the whole model's) through two points of the same layout (`virtual_stages` stages, the same
// schedule) at different rows, for F, I, W and the message (latency + rows x seconds per row). `configured` is the
// run's own size (the profile's microbatch_rows). Noise can make a fit unphysical (a slope or a fixed term below
// 0); such a kind keeps the line through `configured` and the origin instead (the version-1 profile's scaling,
// fixed term 0), so what was measured at the configured size is never lost. Throws Error(kInvalidArgument) when the rows are
// equal or not positive.
schedule::CostProfile fit_cost_profile(const MeasuredPoint& configured, const MeasuredPoint& other, int virtual_stages,
                                       const std::string& measured_with);

// Median of `values` (the mean of the middle two for an even count). Throws sluice::Error(kInvalidArgument)
// naming `what` if `values` is empty.
double median(std::vector<double> values, const char* what);

}  // namespace sluice::runtime
