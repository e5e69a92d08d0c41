// Per-action costs for the simulator, in any consistent time unit (the renderers call it "units").
#pragma once

namespace sluice {
namespace schedule {

struct CostModel {
  double forward = 1.0;          // F
  double backward_input = 1.0;   // I; a fused B costs I + W
  double backward_weight = 1.0;  // W
  double latency = 0.0;          // per message between different ranks
  double bytes_per_message = 0.0;
  double bandwidth = 0.0;  // bytes per time unit; 0 means transfers cost latency only
};

// Throws sluice::Error(kInvalidArgument) naming the first negative or non-finite field.
void check_cost_model(const CostModel& costs);

// Time one activation or gradient takes to reach another rank.
double transfer_time(const CostModel& costs);

}  // namespace schedule
}  // namespace sluice
