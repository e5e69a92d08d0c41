// Per-action costs for the simulator, in any consistent time unit (the renderers call it "units").
#pragma once

#include <vector>

#include "core/schedule/action.h"

namespace sluice {
namespace schedule {

// One virtual stage's own costs, for models whose stages differ.
struct StageCost {
  double forward = 1.0;
  double backward_input = 1.0;
  double backward_weight = 1.0;
};

struct CostModel {
  double forward = 1.0;          // F
  double backward_input = 1.0;   // I; a fused B costs I + W
  double backward_weight = 1.0;  // W
  double latency = 0.0;          // per message between different ranks
  double bytes_per_message = 0.0;
  double bandwidth = 0.0;  // bytes per time unit; 0 means transfers cost latency only
  // Per virtual stage (index = stage) when the stages' costs differ, as measured ones do: the first stage skips
  // the model's input gradient, the last computes the loss. Empty: every stage costs the three fields above. The
  // dependency run reads it (simulate, and validation's run); lowering places messages by the fields above.
  std::vector<StageCost> per_stage;
};

// What one compute action of `kind` (F; B = I + W; I; W) costs by the uniform fields of `costs` (inline: lowering
// calls it once per action).
inline double compute_cost(const CostModel& costs, ActionKind kind) {
  switch (kind) {
    case ActionKind::F: return costs.forward;
    case ActionKind::I: return costs.backward_input;
    case ActionKind::W: return costs.backward_weight;
    default: return costs.backward_input + costs.backward_weight;  // B
  }
}

// The same on virtual stage `stage`: per_stage[stage] when per_stage is set, else the uniform fields.
double compute_cost(const CostModel& costs, ActionKind kind, int stage);

// Throws sluice::Error(kInvalidArgument) naming the first negative or non-finite field (of per_stage too, with
// its stage).
void check_cost_model(const CostModel& costs);

// Time one activation or gradient takes to reach another rank.
double transfer_time(const CostModel& costs);

}  // namespace schedule
}  // namespace sluice
