#include "tools/sluice/plan_memory.h"

#include <memory>
#include <set>
#include <string>

#include "core/common/error.h"
#include "core/model/builder.h"
#include "core/model/model_shape.h"
#include "core/runtime/trainer_domain.h"
#include "core/model/partition.h"
#include "core/model/stage_module.h"
#include "core/model/stage_widths.h"
#include "kernels/cpu/cpu_backend.h"
#include "tools/sluice/plan_declared_layers.h"

namespace sluice::tools {
namespace {

// The rows of the largest micro-batch a call cuts (core/runtime/microbatch_rows.h: floor(b/M) + 1 when M does not
// divide the replica batch b). Without data.batch (the C API passes each call's batch) one row per micro-batch, the
// size pipeline.schedule auto assumes too: the table then shows the per-row memory.
int64_t rows_per_microbatch(const config::Config& cfg, int microbatches) {
  if (cfg.data.batch == 0) return 1;
  const int64_t replicas = cfg.pipeline.data_parallel > 0 ? cfg.pipeline.data_parallel : 1;
  if (cfg.data.batch < 0 || cfg.data.batch % replicas != 0 || cfg.data.batch / replicas < microbatches)
    throw Error(ErrorCode::kConfig, "plan: data.batch (" + std::to_string(cfg.data.batch) +
                                        ") must split into " + std::to_string(replicas) +
                                        " equal replica batches of at least one row per micro-batch (" +
                                        std::to_string(microbatches) + ")");
  const int64_t replica_rows = cfg.data.batch / replicas;
  return (replica_rows + microbatches - 1) / microbatches;
}

// Forward FLOPs of the layers the policy recomputes over those of all layers.
double recompute_share(const config::Config& cfg, const std::vector<double>& costs) {
  if (cfg.pipeline.recompute == model::RecomputeMode::kNone) return 0.0;
  if (cfg.pipeline.recompute == model::RecomputeMode::kFull) return 1.0;
  const std::set<int> chosen(cfg.pipeline.recompute_layers.begin(), cfg.pipeline.recompute_layers.end());
  double all = 0.0, recomputed = 0.0;
  for (size_t layer = 0; layer < costs.size(); ++layer) {
    all += costs[layer];
    if (chosen.count(static_cast<int>(layer))) recomputed += costs[layer];
  }
  return all > 0.0 ? recomputed / all : 0.0;
}

}  // namespace

namespace {

bool dropped(const model::RecomputePolicy& policy, int layer) {
  return policy.mode == model::RecomputeMode::kFull ||
         (policy.mode == model::RecomputeMode::kSelective && policy.layers.count(layer) > 0);
}

// What pipeline.recompute_halos: stash keeps besides for one micro-batch of `rows` rows: the halo-filled input of
// every layer of `range` the policy drops (`halo`: runtime::rank_halo_stash, bytes per sample per layer).
double stashed_halo_inputs(const std::vector<double>& halo, const model::LayerRange& range,
                           const model::RecomputePolicy& policy, int64_t rows) {
  double bytes = 0.0;
  for (int l = range.first; l < range.last; ++l) {
    if (dropped(policy, l)) bytes += halo[static_cast<size_t>(l)];
  }
  return bytes * static_cast<double>(rows);
}

// What the layers of `range` keep for one micro-batch of `rows` rows under `policy`, from their shapes: a kept
// layer its declared stash (or its input), a run of dropped layers only its first layer's input.
double estimated_stash(const config::ModelSpec& spec, const std::vector<model::LayerShape>& shapes,
                       const model::LayerRange& range, const model::RecomputePolicy& policy, int64_t rows) {
  auto dropped = [&](int layer) { return sluice::tools::dropped(policy, layer); };
  constexpr double kBytesPerFloat = 4.0;
  const std::vector<int64_t> in = model::stage_in_widths(spec, shapes, range);
  double bytes = 0.0;
  for (int l = range.first; l < range.last; ++l) {
    const model::LayerShape& shape = shapes[static_cast<size_t>(l)];
    const double input = kBytesPerFloat * static_cast<double>(in[static_cast<size_t>(l)]);
    if (!dropped(l)) {
      bytes += shape.stash_bytes > 0.0 ? shape.stash_bytes : input;
    } else if (l == range.first || !dropped(l - 1)) {
      bytes += input;  // a dropped run keeps its input for the recompute
    }
  }
  return bytes * static_cast<double>(rows);
}

// Every stage built as the trainer builds it, one forward of a micro-batch of zeros each, its stash measured.
std::vector<double> measured_stash(const config::Config& cfg, const std::vector<int>& split,
                                   const model::RecomputePolicy& policy, int64_t rows) {
  kernels::Backend& backend = kernels::cpu_backend();
  const model::CustomLayerRegistry declared = declared_layers(cfg.model);
  const std::vector<model::LayerShape> shapes = model::model_shape(cfg.model, declared);
  std::vector<double> stash;
  for (const model::LayerRange& range : model::split_to_ranges(split)) {
    std::vector<std::unique_ptr<model::Layer>> mine = model::build_layers(
        cfg.model, backend, declared, range.first, range.last, shapes[static_cast<size_t>(range.first)].in_shape);
    model::StageModule stage(backend, range.first, std::move(mine), policy);
    stage.forward(0, backend.zeros(rows, stage.in_features()), model::StepInfo{});
    stash.push_back(static_cast<double>(stage.stashed_bytes()));
  }
  return stash;
}

}  // namespace

namespace {

StageMemory stage_memory(const config::Config& cfg, int stages, int chunks, int microbatches, bool always_estimate) {
  StageMemory memory;
  memory.rows = rows_per_microbatch(cfg, microbatches);
  const std::vector<model::LayerShape> shapes = model::model_shape(cfg.model, declared_layers(cfg.model));
  memory.recompute_share = recompute_share(cfg, model::flops_of(shapes));
  // The trainer's split: explicit from the config, else balanced by cost (FLOPs and the bytes at each cut).
  const std::vector<int> split =
      model::choose_model_split(cfg.model, shapes, cfg.pipeline, stages * chunks);
  const model::RecomputePolicy policy =
      model::recompute_policy(cfg.pipeline.recompute, cfg.pipeline.recompute_layers, cfg.pipeline.recompute_halos);
  int64_t parameters = 0;
  for (const model::LayerShape& shape : shapes) parameters += shape.params;
  memory.estimated = always_estimate || parameters > kLargestMeasuredModel;
  // A rank's activations are its block's with pipeline.domain (the split above weighs the whole field's costs).
  config::Config rank_cfg = cfg;
  rank_cfg.model = runtime::rank_model(cfg);
  // The stages are built from plain layers on the block (no halo channel): the halo-filled inputs `stash` keeps for
  // the dropped layers are added from their shapes.
  const std::vector<double> halo = runtime::rank_halo_stash(cfg);
  const std::vector<model::LayerRange> ranges = model::split_to_ranges(split);
  if (!memory.estimated) {
    memory.stash_bytes = measured_stash(rank_cfg, split, policy, memory.rows);
  } else {
    const std::vector<model::LayerShape> rank_shapes = model::model_shape(rank_cfg.model, declared_layers(cfg.model));
    for (const model::LayerRange& range : ranges) {
      memory.stash_bytes.push_back(estimated_stash(rank_cfg.model, rank_shapes, range, policy, memory.rows));
    }
  }
  for (size_t s = 0; s < ranges.size(); ++s) {
    const double kept = stashed_halo_inputs(halo, ranges[s], policy, memory.rows);
    memory.stash_bytes[s] += kept;
    memory.halo_inputs = memory.halo_inputs || kept > 0.0;
  }
  return memory;
}

}  // namespace

StageMemory measure_stage_memory(const config::Config& cfg, int stages, int chunks, int microbatches) {
  return stage_memory(cfg, stages, chunks, microbatches, false);
}

StageMemory estimate_stage_memory(const config::Config& cfg, int stages, int chunks, int microbatches) {
  return stage_memory(cfg, stages, chunks, microbatches, true);
}

}  // namespace sluice::tools
