// The Trainer's set-up, the first part of its flow: what Trainer::start makes from a Config and the host's
// communicator — the communicators, the layout, the partitioned and built stage modules, the optimizer, the lowered
// schedule, the pipeline transport, the data-parallel gradient sum and the executors that run the schedule. The
// step engine (trainer.h) runs calls on these parts; it owns the run's state (steps, accumulation window, learning
// rate, normalization, samples).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/comm/duplicate_comm.h"
#include "core/comm/mpi_context.h"
#include "core/config/config.h"
#include "core/config/domain_layout.h"
#include "core/config/inter_node_traffic.h"
#include "core/config/layout.h"
#include "core/model/builder.h"
#include "core/model/loss.h"
#include "core/model/optimizer.h"
#include "core/model/stage_module.h"
#include "core/runtime/declared_domain.h"
#include "core/runtime/executor.h"
#include "core/runtime/gradient_reducer.h"
#include "core/runtime/pipeline_transport.h"
#include "core/runtime/trainer_domain.h"
#include "core/schedule/schedule.h"

namespace sluice::runtime {

// Owned by the Trainer; read by everything that works on a started trainer (run report, evaluation, parameter
// access, sample routing, checkpoints). Members are declared in construction order, so they are destroyed in
// the reverse: the executors before the stages and the transport they use, the communicators last.
struct RunParts {
  // Given before start().
  model::CustomLayerRegistry custom_layers;  // resolves `{type: custom, name: ...}` (layer_params.h sizes by it)
  model::CustomLoss custom_loss;             // loss: custom (sluice_trainer_register_loss)
  // This rank's declared block (sluice_trainer_set_domain, handed to Trainer::start); start gathers every rank's
  // (gather_declared_domain) into the layout it runs (domain_layout_for in trainer_domain.h). None: the even split.
  std::optional<DeclaredDomain> declaration;

  // Made by start().
  std::unique_ptr<comm::DuplicateComm> world;  // the host's communicator duplicated: outlives everything below
  config::Layout layout{};
  config::RankOrderChoice rank_order{};  // how pipeline.rank_order was resolved, with each option's bytes
  int blas_threads = 1;                  // this rank's cpu kernel threads after config.cpu_threads was applied
  std::string schedule_choice_report;    // pipeline.schedule auto: the candidate table; else empty
  std::unique_ptr<comm::MpiContext> mpi;
  PipelineTransport pipeline_transport;  // after mpi (may use its transport), before the executors (use it)
  // This rank's block when the model runs on a domain (trainer_domain.h), else null. Before the stages: their
  // layers keep references to its levels.
  std::unique_ptr<RunDomain> domain;
  std::map<int, std::unique_ptr<model::StageModule>> stages;  // this rank's stage modules, by global stage index
  std::unique_ptr<model::Optimizer> optimizer;
  schedule::Schedule lowered;
  model::SkipRoutes skip_routes;  // skips that travel straight between stages (core/model/skip_routes.h)
  std::unique_ptr<schedule::Schedule> forward_only;
  std::unique_ptr<Executor> executor;
  std::unique_ptr<Executor> predictor;
  // Forward-only orders of fewer micro-batches (a prediction's remainder rows), by micro-batch count; each
  // executor keeps a reference to its schedule, so both live here together.
  std::map<int, std::pair<std::unique_ptr<schedule::Schedule>, std::unique_ptr<Executor>>> short_predictors;
  // What one sample is on this rank: with a domain, its block ([C, block extents], C order), else the whole sample.
  int64_t input_features = 0;
  int64_t output_features = 0;
  std::vector<int64_t> input_shape;   // one sample's shape at the model's input (config/sample_shape.h)
  std::vector<int64_t> output_shape;  // ... and at its output
  int num_layers = 0;
  kernels::Backend* backend = nullptr;  // the device of this rank's pipeline stage (config device)
  int gpu_local_rank = -1;              // this rank's place among its node's GPU-driving ranks; -1: drives none
  std::unique_ptr<GradientReducer> reducer;  // the data-parallel gradient sum; null with one replica

  // Whether this rank holds the first / the last pipeline stage (reads the inputs / the targets).
  bool holds_first_stage() const { return stages.count(0) != 0; }
  bool holds_last_stage() const { return stages.count(lowered.num_stages() - 1) != 0; }
  // The pipeline transport of this rank ("mpi", "staged", "nccl") and across the world ("mixed: ...").
  std::string transport_name() const { return config::transport_kind_name(pipeline_transport.kind); }
  const std::string& transport_summary() const { return pipeline_transport.summary; }
  // The data-parallel gradient sum in use, or "" with one replica.
  std::string gradient_sum_name() const { return reducer ? reducer->name() : ""; }
  // The executor of a forward-only pass of `microbatches` micro-batches: the predictor for pipeline.microbatches,
  // else one built on first use (identical on every rank, so a refusal here is a refusal everywhere).
  Executor& predictor_for(int microbatches, int configured_microbatches);
};

// What the set-up needs from the step engine: `local_checks` runs after this rank's stages are built, among the
// local steps whose failure every rank agrees on (the step engine's own configuration); `stage_done` is the
// training executor's callback when a stage's backward is done (it starts the data-parallel sums).
struct SetupHooks {
  std::function<void()> local_checks;
  std::function<void(int stage)> stage_done;
};

// Collective over `host` (only duplicated, never sent on). `cfg`'s pipeline.schedule auto becomes the chosen
// schedule. Either every rank returns with `parts` made, or every rank throws (then `parts` holds only the
// duplicated communicator, reused by a later call).
void start_run_parts(RunParts& parts, config::Config& cfg, MPI_Comm host, const SetupHooks& hooks);

}  // namespace sluice::runtime
