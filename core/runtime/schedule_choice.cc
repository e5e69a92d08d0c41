#include "core/runtime/schedule_choice.h"

#include <algorithm>
#include <cstring>

#include "core/comm/rank_zero_decides.h"
#include "core/model/partition.h"
#include "core/model/stage_widths.h"
#include "core/common/error.h"
#include "core/schedule/cost_profile.h"
#include "core/schedule/generators.h"
#include "core/runtime/trainer_domain.h"

namespace sluice::runtime {
namespace {

constexpr double kBytesPerFloat = 4.0;
constexpr double kFlopsPerTimeUnit = 1e6;  // the table's time unit: MFLOP

// The stages of the balanced partition (the one a run without pipeline.split uses) into ranks x chunks pieces.
// `rank_shapes`: the same layers' widths on one rank (one block's with a domain) for the stash; the partition and
// the FLOPs stay the whole field's, as the trainer's partition weighs them. A stage's widths are those it builds
// (model::stage_in_widths): a skip routed over it (skip_routes.h) is neither its input nor in its stash.
std::vector<schedule::StageSizes> stage_sizes(const config::Config& cfg, const std::vector<model::LayerShape>& shapes,
                                              const std::vector<model::LayerShape>& rank_shapes, int chunks) {
  const int stages = cfg.pipeline.stages * chunks;
  if (static_cast<int>(shapes.size()) < stages) return {};
  const double state_floats = state_floats_per_parameter(cfg);
  // Full recompute drops every layer: under recompute_halos: stash each halo layer's filled input stays too.
  const std::vector<double> halo = rank_halo_stash(cfg);
  const config::ModelSpec rank_spec = rank_model(cfg);
  config::PipelineSpec balanced = cfg.pipeline;
  balanced.split.clear();
  std::vector<schedule::StageSizes> sizes;
  for (const model::LayerRange& range :
       model::split_to_ranges(model::choose_model_split(cfg.model, shapes, balanced, stages))) {
    const std::vector<int64_t> in = model::stage_in_widths(rank_spec, rank_shapes, range);
    schedule::StageSizes stage;
    stage.input_bytes_per_sample = kBytesPerFloat * static_cast<double>(in[range.first]);
    for (int layer = range.first; layer < range.last; ++layer) {
      stage.forward_time_per_sample += shapes[layer].flops / 3.0 / kFlopsPerTimeUnit;  // flops counts F + B, B = 2F
      stage.static_bytes += kBytesPerFloat * state_floats * static_cast<double>(shapes[layer].params);
      // each layer's input, or what a custom layer declares it keeps
      stage.stash_bytes_per_sample += rank_shapes[layer].stash_bytes > 0.0
                                          ? rank_shapes[layer].stash_bytes
                                          : kBytesPerFloat * static_cast<double>(in[layer]);
      stage.input_bytes_per_sample += halo[static_cast<size_t>(layer)];
    }
    sizes.push_back(stage);
  }
  return sizes;
}

// A measured profile (pipeline.costs) replaces the FLOP estimate's scale and its I = W = F: the stages keep their
// FLOP shares of the model's forward, scaled so that they add up to the measured seconds per sample (the slope of
// the fit), and every action adds its stage's share of the profile's fixed term, so a candidate with other rows or
// chunks pays (a + b x rows) / stages per action as costs_for (cost_profile.h) charges it.
void use_measured_costs(const schedule::CostProfile& profile, const std::vector<model::LayerShape>& shapes,
                        schedule::SearchModel& m) {
  double model_forward = 0.0;  // the FLOP estimate of one sample's forward, in the table's unit
  for (const model::LayerShape& shape : shapes) model_forward += shape.flops / 3.0 / kFlopsPerTimeUnit;
  if (!(model_forward > 0.0)) return;
  const double seconds_per_unit = profile.forward_per_sample / model_forward;
  auto estimate = m.stages;
  m.stages = [estimate, seconds_per_unit](int chunks) {
    std::vector<schedule::StageSizes> sizes = estimate(chunks);
    for (schedule::StageSizes& stage : sizes) stage.forward_time_per_sample *= seconds_per_unit;
    return sizes;
  };
  m.input_ratio = profile.backward_input_per_sample / profile.forward_per_sample;
  m.weight_ratio = profile.backward_weight_per_sample / profile.forward_per_sample;
  // The fitted fixed terms (0 in a version-1 profile: then costs are linear in rows, as that profile measured).
  m.forward_per_microbatch = profile.forward_per_microbatch;
  m.input_per_microbatch = profile.backward_input_per_microbatch;
  m.weight_per_microbatch = profile.backward_weight_per_microbatch;
  m.transfer = profile.message_latency;
  m.transfer_per_row = profile.message_per_row;
}

// How the table's step times were costed (the line under the table).
std::string cost_basis(const config::Config& cfg, const schedule::SearchModel& model) {
  if (cfg.pipeline.costs.empty()) return "costs from the FLOP estimate, time unit MFLOP, no per-micro-batch overhead";
  const bool fixed = model.forward_per_microbatch + model.input_per_microbatch + model.weight_per_microbatch > 0;
  return "costs measured in " + cfg.pipeline.costs + ", time unit seconds, " +
         (fixed ? "a + b x rows per micro-batch"
                : "linear in rows: the profile has no fixed per-micro-batch terms (version 1, or one size measured)");
}

}  // namespace

double state_floats_per_parameter(const config::Config& cfg) {
  double optimizer_state = cfg.optimizer.momentum > 0.0 ? 1.0 : 0.0;
  if (cfg.optimizer.type == config::OptimizerType::kAdamW) optimizer_state = 2.0;
  return 2.0 + optimizer_state;
}

std::vector<model::LayerShape> rank_shapes(const config::Config& cfg, const model::CustomLayerRegistry& custom_layers) {
  return model::model_shape(rank_model(cfg), custom_layers);
}

schedule::SearchModel search_model(const config::Config& cfg, const std::vector<model::LayerShape>& shapes,
                                   const std::vector<model::LayerShape>& rank_shapes, int data_parallel) {
  if (rank_shapes.size() != shapes.size())
    throw Error(ErrorCode::kInternal, "pipeline.schedule auto: the block's layers differ from the field's");
  schedule::SearchModel m;
  m.ranks = cfg.pipeline.stages;
  const int replicas = std::max(1, data_parallel);
  m.batch = cfg.data.batch > 0 ? static_cast<int>(cfg.data.batch / replicas) : cfg.pipeline.microbatches;
  m.stages = [cfg, shapes, rank_shapes](int chunks) { return stage_sizes(cfg, shapes, rank_shapes, chunks); };
  m.budget_bytes = cfg.pipeline.memory_budget;
  m.max_chunks = 4;
  if (!cfg.pipeline.costs.empty()) use_measured_costs(schedule::load_cost_profile(cfg.pipeline.costs), shapes, m);
  return m;
}

ScheduleChoice choose_schedule(const config::Config& cfg, const std::vector<model::LayerShape>& shapes,
                               const std::vector<model::LayerShape>& rank_shapes, int data_parallel) {
  const schedule::SearchModel model = search_model(cfg, shapes, rank_shapes, data_parallel);
  if (cfg.data.batch > 0 && model.batch < 1)
    throw Error(ErrorCode::kConfig, "pipeline.schedule auto: data.batch is smaller than the replicas");
  ScheduleChoice choice;
  choice.candidates = schedule::evaluate_candidates(model);
  try {
    choice.chosen = schedule::choose_candidate(choice.candidates, model.budget_bytes);
  } catch (const Error& e) {
    throw Error(ErrorCode::kConfig, e.what());
  }
  choice.report = schedule::format_candidates(choice.candidates, choice.chosen, model.budget_bytes) + "(" + cost_basis(cfg, model) +
                  "; bytes: 4-byte parameters, gradients, optimizer state and each layer's input per stashed sample)\n";
  return choice;
}

std::optional<schedule::CostModel> planned_costs(const config::Config& cfg, int data_parallel) {
  if (cfg.pipeline.costs.empty()) return std::nullopt;
  const double per_replica = cfg.data.batch > 0 ? static_cast<double>(cfg.data.batch) / std::max(1, data_parallel) : 0.0;
  const double rows = per_replica > 0.0 ? per_replica / cfg.pipeline.microbatches : 1.0;
  return schedule::costs_for(schedule::load_cost_profile(cfg.pipeline.costs),
                             cfg.pipeline.stages * cfg.pipeline.chunks, rows);
}

void apply(const schedule::Candidate& chosen, config::Config& cfg) {
  cfg.pipeline.schedule = config::schedule_setting_named(chosen.schedule);
  cfg.pipeline.chunks = chosen.chunks;
  cfg.pipeline.microbatches = chosen.microbatches;
  cfg.pipeline.recompute = chosen.recompute ? model::RecomputeMode::kFull : model::RecomputeMode::kNone;
  cfg.pipeline.split.clear();  // an explicit split was for the chunks of another schedule
}

std::string agree_schedule(MPI_Comm world, config::Config& cfg, const model::CustomLayerRegistry& custom_layers,
                           int data_parallel) {
  // Rank 0's decision: numbers {ok, schedule name index, chunks, micro-batches, recompute}, text its report or
  // its error. Rank 0's failure travels as data (ok 0), so every rank throws the same kConfig error below.
  const comm::Decision decision = comm::rank_zero_decides(world, "pipeline.schedule auto", [&] {
    comm::Decision d;
    d.numbers = {0, 0, 0, 0, 0};
    try {
      const ScheduleChoice choice = choose_schedule(cfg, model::model_shape(cfg.model, custom_layers),
                                                    rank_shapes(cfg, custom_layers), data_parallel);
      const schedule::Candidate& c = choice.candidates[choice.chosen];
      const std::vector<std::string>& names = schedule::schedule_names();
      d.numbers = {1, static_cast<int64_t>(std::find(names.begin(), names.end(), c.schedule) - names.begin()),
                   c.chunks, c.microbatches, c.recompute ? 1 : 0};
      d.text = choice.report;
    } catch (const std::exception& e) {
      d.text = e.what();
    }
    return d;
  });
  const std::vector<int64_t>& verdict = decision.numbers;
  if (verdict.size() != 5) throw Error(ErrorCode::kInternal, "pipeline.schedule auto: malformed decision from rank 0");
  if (!verdict[0]) throw Error(ErrorCode::kConfig, decision.text + " (decided on rank 0)");
  schedule::Candidate chosen;
  chosen.schedule = schedule::schedule_names().at(static_cast<size_t>(verdict[1]));
  chosen.chunks = static_cast<int>(verdict[2]);
  chosen.microbatches = static_cast<int>(verdict[3]);
  chosen.recompute = verdict[4] != 0;
  apply(chosen, cfg);
  return decision.text;
}

}  // namespace sluice::runtime
