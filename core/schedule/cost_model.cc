#include "core/schedule/cost_model.h"

#include <cmath>
#include <string>

#include "core/common/error.h"

namespace sluice {
namespace schedule {
namespace {

void require_non_negative(const char* name, double value) {
  if (!std::isfinite(value) || value < 0.0)
    throw Error(ErrorCode::kInvalidArgument,
                std::string("cost model: ") + name + " must be a finite number >= 0, got " + std::to_string(value));
}

}  // namespace

void check_cost_model(const CostModel& costs) {
  require_non_negative("forward cost", costs.forward);
  require_non_negative("backward-input cost", costs.backward_input);
  require_non_negative("backward-weight cost", costs.backward_weight);
  for (size_t stage = 0; stage < costs.per_stage.size(); ++stage) {
    const std::string of = " of stage " + std::to_string(stage);
    require_non_negative(("forward cost" + of).c_str(), costs.per_stage[stage].forward);
    require_non_negative(("backward-input cost" + of).c_str(), costs.per_stage[stage].backward_input);
    require_non_negative(("backward-weight cost" + of).c_str(), costs.per_stage[stage].backward_weight);
  }
  require_non_negative("latency", costs.latency);
  require_non_negative("bytes per message", costs.bytes_per_message);
  require_non_negative("bandwidth", costs.bandwidth);
  if (costs.bytes_per_message > 0.0 && costs.bandwidth == 0.0)
    throw Error(ErrorCode::kInvalidArgument, "cost model: bytes per message is set but bandwidth is 0; give a "
                                             "positive bandwidth (bytes per time unit)");
}

double compute_cost(const CostModel& costs, ActionKind kind, int stage) {
  if (costs.per_stage.empty()) return compute_cost(costs, kind);
  CostModel own;
  own.forward = costs.per_stage[stage].forward;
  own.backward_input = costs.per_stage[stage].backward_input;
  own.backward_weight = costs.per_stage[stage].backward_weight;
  return compute_cost(own, kind);
}

double transfer_time(const CostModel& costs) {
  return costs.latency + (costs.bandwidth > 0.0 ? costs.bytes_per_message / costs.bandwidth : 0.0);
}

}  // namespace schedule
}  // namespace sluice
