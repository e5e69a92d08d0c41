#include "tools/sluice/plan_stage_table.h"

#include <iomanip>
#include <map>
#include <sstream>

#include "core/common/error.h"
#include "core/model/model_shape.h"
#include "core/model/stage_widths.h"
#include "core/runtime/schedule_choice.h"
#include "core/schedule/chrome_trace.h"
#include "core/schedule/generators.h"
#include "core/schedule/schedule_kinds.h"
#include "core/schedule/simulator.h"
#include "tools/sluice/plan_declared_layers.h"
#include "tools/sluice/plan_memory.h"

namespace sluice::tools {
namespace {

using schedule::Schedule;

// What every kind's table shares: the layer shapes, and each chunk count's split and stash (computed once each).
struct StagePlanner {
  const config::Config& cfg;
  std::vector<model::LayerShape> shapes;
  std::map<int, StageMemory> memory;  // by chunks per rank

  const StageMemory& memory_for(const Schedule& compute) {
    auto found = memory.find(compute.chunks);
    if (found == memory.end()) {
      found = memory.emplace(compute.chunks, measure_stage_memory(cfg, compute.ranks, compute.chunks,
                                                                  compute.microbatches)).first;
    }
    return found->second;
  }
};

// The rank rows of one schedule: its layers from the trainer's split, its bytes from the stash per stage.
ScheduleStages rows_of(StagePlanner& planner, const Schedule& compute, const schedule::CostModel& costs) {
  const config::Config& cfg = planner.cfg;
  ScheduleStages table;
  table.schedule = compute.name;
  table.chunks = compute.chunks;
  const std::vector<model::LayerRange> ranges = model::split_to_ranges(model::choose_model_split(
      cfg.model, planner.shapes, cfg.pipeline, compute.num_stages()));
  const std::vector<double> stash = schedule::peak_stash(compute, planner.memory_for(compute).stash_bytes);
  const schedule::SimulationResult result = schedule::simulate(compute, costs);
  table.makespan = result.makespan;
  table.bubble_fraction = result.bubble_fraction;
  const double bytes_per_parameter = 4.0 * runtime::state_floats_per_parameter(cfg);
  table.ranks.resize(static_cast<size_t>(compute.ranks));
  for (int stage = 0; stage < compute.num_stages(); ++stage) {
    RankStages& rank = table.ranks[static_cast<size_t>(compute.rank_of(stage))];
    const model::LayerRange& range = ranges[static_cast<size_t>(stage)];
    rank.ranges.push_back(range);
    for (int l = range.first; l < range.last; ++l) rank.parameters += planner.shapes[static_cast<size_t>(l)].params;
  }
  for (size_t r = 0; r < table.ranks.size(); ++r) {
    RankStages& rank = table.ranks[r];
    rank.static_bytes = bytes_per_parameter * static_cast<double>(rank.parameters);
    rank.stash_bytes = stash[r];
    rank.bubble = result.makespan > 0.0 ? result.idle[r] / result.makespan : 0.0;
    const double budget = cfg.pipeline.memory_budget;
    rank.fits = budget <= 0.0 || rank.static_bytes + rank.stash_bytes <= budget;
  }
  return table;
}

// The plan's costs are per chunk of its own schedule: a kind with other chunks cuts the same model into pieces
// `chunks / plan_chunks` times as large (messages cost the same). Per-stage costs belong to the plan's stages only.
schedule::CostModel costs_per_chunk(schedule::CostModel costs, int plan_chunks, int chunks) {
  const double scale = static_cast<double>(plan_chunks) / chunks;
  costs.forward *= scale;
  costs.backward_input *= scale;
  costs.backward_weight *= scale;
  if (plan_chunks != chunks) costs.per_stage.clear();
  return costs;
}

// Another kind at the plan's ranks, micro-batches and costs; the reason instead when it cannot run them.
ScheduleStages other_kind(StagePlanner& planner, const schedule::ScheduleKindInfo& kind, const Schedule& chosen,
                          const schedule::CostModel& costs) {
  try {
    const Schedule compute =
        schedule::make_schedule(kind.name, chosen.ranks, chosen.microbatches, schedule::default_chunks(kind.kind));
    return rows_of(planner, compute, costs_per_chunk(costs, chosen.chunks, compute.chunks));
  } catch (const Error& e) {
    ScheduleStages refused;
    refused.schedule = kind.name;
    refused.chunks = schedule::default_chunks(kind.kind);
    refused.refused = e.what();
    return refused;
  }
}

std::string layers_text(const std::vector<model::LayerRange>& ranges) {
  std::string text;
  for (const model::LayerRange& range : ranges) {
    if (!text.empty()) text += ",";
    text += std::to_string(range.first);
    if (range.size() > 1) text += "-" + std::to_string(range.last - 1);
  }
  return text;
}

void write_table(std::ostream& out, const ScheduleStages& table) {
  out << table.schedule << ", " << table.chunks << " chunk(s) per rank" << (table.chosen ? " (planned)" : "");
  if (!table.refused.empty()) {
    out << ": cannot run this layout: " << table.refused << "\n";
    return;
  }
  out << ": step " << table.makespan << ", bubble fraction " << std::fixed << std::setprecision(4)
      << table.bubble_fraction << std::defaultfloat << std::setprecision(6) << "\n"
      << "    rank  layers          parameters     static bytes   peak stash bytes  bubble  fits\n";
  for (size_t r = 0; r < table.ranks.size(); ++r) {
    const RankStages& rank = table.ranks[r];
    out << "    " << std::left << std::setw(6) << r << std::setw(16) << layers_text(rank.ranges) << std::setw(15)
        << rank.parameters << std::fixed << std::setprecision(0) << std::setw(15) << rank.static_bytes
        << std::setw(18) << rank.stash_bytes << std::setprecision(4) << std::setw(8) << rank.bubble
        << std::defaultfloat << std::setprecision(6) << (rank.fits ? "yes" : "no") << "\n";
  }
}

}  // namespace

std::vector<ScheduleStages> plan_stage_tables(const config::Config& cfg, const Schedule& chosen,
                                              const schedule::CostModel& costs) {
  StagePlanner planner{cfg, model::model_shape(cfg.model, declared_layers(cfg.model)), {}};
  std::vector<ScheduleStages> tables{rows_of(planner, chosen, costs)};
  tables.front().chosen = true;
  for (const schedule::ScheduleKindInfo& kind : schedule::schedule_kinds()) {
    if (kind.name != chosen.name) tables.push_back(other_kind(planner, kind, chosen, costs));
  }
  return tables;
}

void write_stage_tables(std::ostream& out, const config::Config& cfg, const std::vector<ScheduleStages>& tables) {
  out << "per rank, for each schedule at " << (tables.empty() ? 0 : tables.front().ranks.size())
      << " ranks and the same micro-batches and recompute (layers: first-last layer of each stage; static bytes: 4-byte "
      << "parameters, gradients and optimizer state; peak stash as counted above; bubble: the rank's idle share of the "
      << "simulated step; fits: static + stash within pipeline.memory_budget";
  if (cfg.pipeline.memory_budget > 0.0) {
    out << " of " << std::fixed << std::setprecision(0) << cfg.pipeline.memory_budget << std::defaultfloat
        << std::setprecision(6) << " bytes";
  } else {
    out << ", none set";
  }
  out << ")\n";
  for (const ScheduleStages& table : tables) write_table(out, table);
  out << "\n";
}

std::string stage_tables_json(const std::vector<ScheduleStages>& tables) {
  std::ostringstream out;
  out << std::setprecision(17) << '[';
  for (size_t t = 0; t < tables.size(); ++t) {
    const ScheduleStages& table = tables[t];
    out << (t ? "," : "") << "{\"schedule\":" << schedule::json_quote(table.schedule) << ",\"chunks\":" << table.chunks
        << ",\"planned\":" << (table.chosen ? "true" : "false");
    if (!table.refused.empty()) {
      out << ",\"refused\":" << schedule::json_quote(table.refused) << '}';
      continue;
    }
    out << ",\"makespan\":" << table.makespan << ",\"bubble_fraction\":" << table.bubble_fraction << ",\"ranks\":[";
    for (size_t r = 0; r < table.ranks.size(); ++r) {
      const RankStages& rank = table.ranks[r];
      out << (r ? "," : "") << "{\"layers\":[";
      for (size_t s = 0; s < rank.ranges.size(); ++s)
        out << (s ? "," : "") << '[' << rank.ranges[s].first << ',' << rank.ranges[s].last << ']';
      out << "],\"parameters\":" << rank.parameters << ",\"static_bytes\":" << rank.static_bytes
          << ",\"stash_bytes\":" << rank.stash_bytes << ",\"bubble\":" << rank.bubble
          << ",\"fits\":" << (rank.fits ? "true" : "false") << '}';
    }
    out << "]}";
  }
  out << ']';
  return out.str();
}

}  // namespace sluice::tools
