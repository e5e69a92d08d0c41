// Resolves `pipeline.schedule: auto` (with `pipeline.memory_budget`): the model's shape (core/model/model_shape.h)
// becomes the plain numbers of core/schedule/schedule_search.h, whose table of simulated candidates picks the
// schedule, chunks, micro-batch count and recompute policy. `sluice plan CONFIG` prints the table; the trainer
// resolves it at start, before anything is built, with rank 0's choice broadcast to all.
#pragma once

#include <mpi.h>

#include <optional>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/model/model_shape.h"
#include "core/schedule/schedule_search.h"

namespace sluice::runtime {

struct ScheduleChoice {
  std::vector<schedule::Candidate> candidates;
  size_t chosen = 0;
  std::string report;  // the candidate table, chosen one marked, and the cost basis
};

// Every layer's widths on one rank: the largest block's of the even split `sluice train` runs when cfg runs on a
// domain (runs_on_domain), else the whole field's. What a rank stashes; the partition keeps the whole field's costs.
std::vector<model::LayerShape> rank_shapes(const config::Config& cfg, const model::CustomLayerRegistry& custom_layers);

// Floats kept per parameter: the parameter, its gradient and the optimizer's state (AdamW 2, SGD with momentum 1).
double state_floats_per_parameter(const config::Config& cfg);

// Stages of the balanced FLOP partition for each chunk count. Costs from the FLOP estimate (time unit: MFLOP);
// memory: 4-byte parameters, gradients and optimizer state (AdamW 2, SGD with momentum 1) of the rank's layers, and
// a stash of every layer's input per sample (each stage's input alone with full recompute) at `rank_shapes`' widths,
// as the stage builds them (model/stage_widths.h: a skip routed over a stage is not in its stash). The batch per
// replica is data.batch / data_parallel; without data.batch (the API passes batches in) only
// pipeline.microbatches is tried.
schedule::SearchModel search_model(const config::Config& cfg, const std::vector<model::LayerShape>& shapes,
                                   const std::vector<model::LayerShape>& rank_shapes, int data_parallel);

// Throws Error(kConfig) when no candidate fits the budget.
ScheduleChoice choose_schedule(const config::Config& cfg, const std::vector<model::LayerShape>& shapes,
                               const std::vector<model::LayerShape>& rank_shapes, int data_parallel);

// The per-action costs of cfg.pipeline's layout from its measured profile (pipeline.costs), which the trainer lowers
// its schedule with, as `sluice plan` does; nullopt without a profile (then the unit-cost lowering). Rows per
// micro-batch: data.batch / replicas / micro-batches (one row when data.batch is not set). Throws Error(kIo /
// kInvalidArgument) naming the file when it cannot be read.
std::optional<schedule::CostModel> planned_costs(const config::Config& cfg, int data_parallel);

// Writes the chosen candidate into `cfg.pipeline` in place of auto.
void apply(const schedule::Candidate& chosen, config::Config& cfg);

// Collective over `world` (the trainer's duplicate, never the host's communicator): rank 0 runs choose_schedule
// and its result reaches every rank through comm::rank_zero_decides (bounded by comm.timeout; a silent rank is
// named), and every rank applies it to `cfg`; returns the report (rank 0's table). If rank 0 fails (nothing fits,
// a custom layer it cannot size), every rank throws Error(kConfig) with its message, so no rank goes on alone.
std::string agree_schedule(MPI_Comm world, config::Config& cfg, const model::CustomLayerRegistry& custom_layers,
                           int data_parallel);

}  // namespace sluice::runtime
