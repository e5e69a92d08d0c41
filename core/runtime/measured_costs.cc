#include "core/runtime/measured_costs.h"

#include <algorithm>
#include <string>

#include "core/common/error.h"

namespace sluice::runtime {
namespace {

int index_of(ComputeKind kind) { return static_cast<int>(kind); }

}  // namespace

KindCounts count_compute_actions(const schedule::Schedule& schedule) {
  KindCounts counts{};
  for (const auto& list : schedule.actions) {
    for (const schedule::Action& a : list) {
      switch (a.kind) {
        case schedule::ActionKind::F: ++counts[index_of(ComputeKind::kF)]; break;
        case schedule::ActionKind::B: ++counts[index_of(ComputeKind::kB)]; break;
        case schedule::ActionKind::I: ++counts[index_of(ComputeKind::kI)]; break;
        case schedule::ActionKind::W: ++counts[index_of(ComputeKind::kW)]; break;
        default: break;  // communication costs come from the measured latency
      }
    }
  }
  return counts;
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
