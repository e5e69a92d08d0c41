#include "core/runtime/measured_costs.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "core/common/error.h"

namespace sluice::runtime {
namespace {

int index_of(ComputeKind kind) { return static_cast<int>(kind); }

void count(const schedule::Action& a, KindCounts& counts) {
  switch (a.kind) {
    case schedule::ActionKind::F: ++counts[index_of(ComputeKind::kF)]; break;
    case schedule::ActionKind::B: ++counts[index_of(ComputeKind::kB)]; break;
    case schedule::ActionKind::I: ++counts[index_of(ComputeKind::kI)]; break;
    case schedule::ActionKind::W: ++counts[index_of(ComputeKind::kW)]; break;
    default: break;  // communication costs come from the measured latency
  }
}

}  // namespace

KindCounts count_compute_actions(const schedule::Schedule& schedule) {
  KindCounts counts{};
  for (const auto& list : schedule.actions) {
    for (const schedule::Action& a : list) count(a, counts);
  }
  return counts;
}

std::vector<KindCounts> count_compute_actions_per_stage(const schedule::Schedule& schedule) {
  std::vector<KindCounts> counts(schedule.num_stages(), KindCounts{});
  for (const auto& list : schedule.actions) {
    for (const schedule::Action& a : list) {
      if (a.stage >= 0 && a.stage < schedule.num_stages()) count(a, counts[a.stage]);
    }
  }
  return counts;
}

std::vector<schedule::StageCost> stage_costs_from_busy(const std::vector<KindSeconds>& busy,
                                                       const std::vector<KindCounts>& counts) {
  if (busy.size() != counts.size()) {
    throw Error(ErrorCode::kInvalidArgument, "measured costs: busy seconds for " + std::to_string(busy.size()) +
                                                 " stages but action counts for " + std::to_string(counts.size()));
  }
  std::vector<schedule::StageCost> stages;
  for (size_t s = 0; s < busy.size(); ++s) {
    try {
      const schedule::CostModel costs = costs_from_busy(busy[s], counts[s], 0.0);
      stages.push_back({costs.forward, costs.backward_input, costs.backward_weight});
    } catch (const Error& error) {
      throw Error(error.code(), "stage " + std::to_string(s) + ": " + error.what());
    }
  }
  return stages;
}

schedule::CostModel costs_from_busy(const KindSeconds& busy, const KindCounts& counts, double latency) {
  const int f = index_of(ComputeKind::kF), b = index_of(ComputeKind::kB),
            i = index_of(ComputeKind::kI), w = index_of(ComputeKind::kW);
  if (counts[f] == 0) throw Error(ErrorCode::kInvalidArgument, "measured costs: the schedule has no F action");
  if (counts[i] != counts[w]) {
    throw Error(ErrorCode::kInvalidArgument, "measured costs: the schedule has " + std::to_string(counts[i]) +
                                                 " I actions but " + std::to_string(counts[w]) + " W actions");
  }
  const int backward_pairs = counts[b] + counts[i];
  if (backward_pairs == 0) {
    throw Error(ErrorCode::kInvalidArgument, "measured costs: the schedule has no B and no I/W actions");
  }
  schedule::CostModel costs;
  costs.forward = busy[f] / counts[f];
  const double pair = (busy[b] + busy[i] + busy[w]) / backward_pairs;
  const double split_total = busy[i] + busy[w];
  const double input_share = counts[i] > 0 && split_total > 0.0 ? busy[i] / split_total : 1.0;
  costs.backward_input = pair * input_share;
  costs.backward_weight = pair - costs.backward_input;
  costs.latency = latency;
  schedule::check_cost_model(costs);
  return costs;
}

int second_microbatch_count(int batch, int microbatches) {
  const bool one_row = batch <= microbatches;
  const double target = one_row ? microbatches / 8.0 : microbatches * 8.0;
  int best = 0;
  for (int d = 1; d <= batch; ++d) {
    if (batch % d != 0 || d == microbatches) continue;
    if (best == 0 || std::fabs(std::log(d / target)) < std::fabs(std::log(best / target))) best = d;
  }
  return best;
}

namespace {

struct Line {
  double fixed = 0;
  double per_row = 0;
};

// a + b x rows through (r1, c1) and (r2, c2), clamped as fit_cost_profile says.
Line fit_line(double r1, double c1, double r2, double c2) {
  Line line;
  line.per_row = (c1 - c2) / (r1 - r2);
  line.fixed = c1 - line.per_row * r1;
  if (line.per_row < 0 || line.fixed < 0) return {0.0, c1 / r1};
  return line;
}

}  // namespace

schedule::CostProfile fit_cost_profile(const MeasuredPoint& configured, const MeasuredPoint& other, int virtual_stages,
                                       const std::string& measured_with) {
  const double r1 = configured.rows, r2 = other.rows;
  if (!(r1 > 0) || !(r2 > 0) || r1 == r2 || virtual_stages < 1) {
    throw Error(ErrorCode::kInvalidArgument, "cost fit: needs two different positive micro-batch sizes (got " +
                                                 std::to_string(r1) + " and " + std::to_string(r2) +
                                                 " rows) and positive stages");
  }
  const schedule::CostModel &c1 = configured.costs, &c2 = other.costs;
  const Line f = fit_line(r1, c1.forward, r2, c2.forward);
  const Line i = fit_line(r1, c1.backward_input, r2, c2.backward_input);
  const Line w = fit_line(r1, c1.backward_weight, r2, c2.backward_weight);
  const Line m = fit_line(r1, schedule::transfer_time(c1), r2, schedule::transfer_time(c2));
  schedule::CostProfile profile;
  // Both terms are one stage's 1/S of the model: the whole model's figures are S times them.
  profile.forward_per_sample = f.per_row * virtual_stages;
  profile.backward_input_per_sample = i.per_row * virtual_stages;
  profile.backward_weight_per_sample = w.per_row * virtual_stages;
  profile.forward_per_microbatch = f.fixed * virtual_stages;
  profile.backward_input_per_microbatch = i.fixed * virtual_stages;
  profile.backward_weight_per_microbatch = w.fixed * virtual_stages;
  profile.message_latency = m.fixed;
  profile.message_per_row = m.per_row;
  profile.message_seconds = m.fixed + m.per_row * r1;
  profile.microbatch_rows = r1;
  std::ostringstream rows;
  rows << r1 << " " << r2;
  profile.fit_rows = rows.str();
  profile.measured_with = measured_with;
  return profile;
}

double median(std::vector<double> values, const char* what) {
  if (values.empty()) throw Error(ErrorCode::kInvalidArgument, std::string("median of no ") + what);
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  if (values.size() % 2 == 1) return values[mid];
  const double upper = values[mid];
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return 0.5 * (lower + upper);
}

}  // namespace sluice::runtime
