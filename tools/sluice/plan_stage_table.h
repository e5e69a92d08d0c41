// `sluice plan CONFIG`'s per-stage view of every schedule kind (issue 29 item 4): for the plan's schedule and for each
// other built-in schedule at the same micro-batch count and recompute policy (at its default chunks), each rank's
// layers, parameters, peak stash, bubble and whether its bytes fit pipeline.memory_budget. Analytic for a model
// too large to build (plan_memory.h sizes its stash from the layer shapes), so a 1 B-parameter plan stays quick.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/model/partition.h"
#include "core/schedule/cost_model.h"
#include "core/schedule/schedule.h"

namespace sluice::tools {

struct RankStages {
  std::vector<model::LayerRange> ranges;  // the layers of the rank's stages, in stage order
  int64_t parameters = 0;
  double static_bytes = 0.0;  // 4-byte parameters, gradients and optimizer state (as pipeline.schedule auto counts)
  double stash_bytes = 0.0;   // the simulated peak stash over the rank's in-flight micro-batches
  double bubble = 0.0;        // the rank's idle time over the simulated step
  bool fits = true;           // static + stash within pipeline.memory_budget (always, without a budget)
};

struct ScheduleStages {
  std::string schedule;
  int chunks = 1;
  bool chosen = false;  // the schedule the plan is for
  std::string refused;  // why this kind cannot run this layout (then no ranks)
  double makespan = 0.0;
  double bubble_fraction = 0.0;
  std::vector<RankStages> ranks;
};

// `chosen`: the plan's compute schedule; `costs`: the plan's (recomputation already added to I). The chosen one
// first, then the other kinds in schedule_names() order.
std::vector<ScheduleStages> plan_stage_tables(const config::Config& cfg, const schedule::Schedule& chosen,
                                              const schedule::CostModel& costs);

void write_stage_tables(std::ostream& out, const config::Config& cfg, const std::vector<ScheduleStages>& tables);
// A JSON array, one object per schedule kind.
std::string stage_tables_json(const std::vector<ScheduleStages>& tables);

}  // namespace sluice::tools
