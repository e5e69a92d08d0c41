// Parses optimizer.lr_schedule (core/config/lr_schedule_spec.h). Part of the config parser; errors name the key.
#pragma once

#include "core/config/config_node.h"
#include "core/config/lr_schedule_spec.h"

namespace sluice::config {

// `node` is optimizer.lr_schedule: {type: ..., ...}. The horizon is resolved later (resolve_lr_horizon), when
// `steps` is known.
LrScheduleSpec parse_lr_schedule(const ConfigNode& node);

// cosine and polynomial need a horizon: total_steps, or else the config's `steps` (steps_given). Refuses a
// schedule without one, or whose horizon does not leave a step after its warmup, naming the key. `optimizer` is
// the optimizer section (for error locations); `spec` must come from it.
void resolve_lr_horizon(const ConfigNode& optimizer, bool steps_given, int steps, LrScheduleSpec& spec);

}  // namespace sluice::config
