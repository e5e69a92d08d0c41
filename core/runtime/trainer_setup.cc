#include "core/runtime/trainer_setup.h"

#include <algorithm>
#include <exception>

#include "core/comm/agreement.h"
#include "core/common/error.h"
#include "core/config/domain_layout.h"
#include "core/model/partition.h"
#include "core/model/stage_widths.h"
#include "core/runtime/cpu_threads.h"
#include "core/runtime/custom_layer_devices.h"
#include "core/runtime/domain_support.h"
#include "core/runtime/gradient_sum_choice.h"
#include "core/runtime/nccl_support.h"
#include "core/runtime/node_ranks.h"
#include "core/runtime/ordered_gradient_reducer.h"
#include "core/runtime/placement.h"
#include "core/runtime/rank_order_choice.h"
#include "core/runtime/schedule_choice.h"
#include "core/runtime/wait_setup.h"
#include "core/schedule/forward_only.h"
#include "core/schedule/generators.h"
#include "core/schedule/lowering.h"
#include "core/schedule/validator.h"
#include "kernels/backend_registry.h"
#include "kernels/gemm_precision.h"

namespace sluice::runtime {
namespace {

config::RankOrderChoice choose_rank_order(const RunParts& parts, const config::Config& cfg, int world_size) {
  const int P = cfg.pipeline.stages;
  const config::RankOrder requested = cfg.pipeline.rank_order;
  return agree_rank_order(parts.world->get(), requested, [&](const std::vector<int>& nodes) {
    const int blocks = static_cast<int>(config::domain_block_count(cfg.pipeline.domain));
    const int replicas = world_size / P / blocks;
    // With at most one of the three dimensions above 1 every order is the same layout; with a split and one stage
    // (or one replica) the orders still differ in where the blocks sit.
    if ((P > 1) + (replicas > 1) + (blocks > 1) <= 1) {
      config::StepTraffic none;
      none.gradient_floats.resize(P);
      return config::choose_rank_order(requested, nodes, P, none);
    }
    const std::vector<model::LayerShape> shapes = model::model_shape(cfg.model, parts.custom_layers);
    const std::vector<int> split =
        model::choose_model_split(cfg.model, shapes, cfg.pipeline, P * cfg.pipeline.chunks);
    const schedule::Schedule order = schedule::make_schedule(config::resolved_schedule_name(cfg.pipeline.schedule), P,
                                                             cfg.pipeline.microbatches, cfg.pipeline.chunks);
    // A host that declared its blocks placed them as block = rank % blocks (decided on rank 0; a rank without a
    // declaration while others have one is refused by the gather after the layout).
    return config::choose_rank_order(requested, nodes, P,
                                     step_traffic(cfg, shapes, split, order.stage_to_rank, replicas),
                                     parts.declaration.has_value());
  });
}

// `loss: custom` and the host's loss function (sluice_trainer_register_loss): checked once at start, on every
// rank (registration is local, so one rank may lack it; start's agreement turns that into an error everywhere).
void check_custom_loss(const RunParts& parts, const config::Config& cfg) {
  if (cfg.loss == model::LossKind::kCustom && !parts.custom_loss) {
    throw Error(ErrorCode::kConfig, "loss: custom needs a loss function: register one with "
                                    "sluice_trainer_register_loss before sluice_trainer_start (rank " +
                                        std::to_string(parts.layout.rank) + " has none; `sluice train` cannot have one)");
  }
  if (cfg.loss != model::LossKind::kCustom && parts.custom_loss) {
    throw Error(ErrorCode::kConfig, "a loss function is registered (sluice_trainer_register_loss) but the config "
                                    "says loss: " + model::loss_kind_name(cfg.loss) + "; use loss: custom");
  }
}

// Every layer's widths on this rank: the block's with a domain (the partition weighs `whole`, the whole field's).
std::vector<model::LayerShape> rank_widths(const RunParts& parts, const config::Config& cfg,
                                           const std::vector<model::LayerShape>& whole) {
  if (!parts.domain) return whole;
  return model::model_shape(block_model(cfg.model, parts.domain->box()), parts.custom_layers);
}

// The schedule, the backend and this rank's stage modules and optimizer: local, may fail on some ranks only.
void build_local_state(RunParts& parts, const config::Config& cfg) {
  const int P = cfg.pipeline.stages;
  const int V = cfg.pipeline.chunks;
  // Schedule first: a bad (schedule, P, M, V) combination is a config error worth reporting before
  // anything is allocated.
  const char* kind = config::resolved_schedule_name(cfg.pipeline.schedule);
  schedule::Schedule compute = schedule::make_schedule(kind, P, cfg.pipeline.microbatches, V);
  // Shapes and costs from the config alone: a rank builds (allocates) only the layers of its own chunks.
  const std::vector<model::LayerShape> shapes = model::model_shape(cfg.model, parts.custom_layers);
  const std::vector<model::LayerRange> ranges =
      model::split_to_ranges(model::choose_model_split(cfg.model, shapes, cfg.pipeline, P * V));
  const std::vector<model::LayerShape> widths = rank_widths(parts, cfg, shapes);
  parts.skip_routes = model::skip_routes_of(cfg.model, widths, ranges);
  for (const model::SkipRoute& route : parts.skip_routes.routes) compute.skips.push_back({route.from, route.to});
  // Lowered with the costs it was planned with (pipeline.costs), so the SEND/RECVs sit as `sluice plan` shows them;
  // the compute order, hence every result bit, is the same either way.
  const auto costs = planned_costs(cfg, parts.layout.data_parallel);
  parts.lowered = costs ? schedule::lower(compute, *costs) : schedule::lower(compute);
  schedule::validate(parts.lowered);

  // Before any backend: a custom layer on the wrong kind of stage is named here, not found by a crash in its callback.
  check_custom_layer_devices(cfg, shapes, ranges, parts.lowered);
  // Each pipeline rank runs on its stage's device (data-parallel replicas of a stage share it).
  const config::DeviceKind device = cfg.device_for_stage(parts.layout.stage_rank);
  parts.backend = &kernels::backend_for({config::device_kind_name(device), parts.gpu_local_rank});
  kernels::Backend& backend = *parts.backend;
  // In a mixed pipeline gemm_precision is meant for the cuda stages: cpu stages get fp32, which is all the CPU
  // backend accepts (it refuses tf32/bf16 rather than ignore them).
  backend.set_gemm_precision(cfg.gemm_precision_for_stage(parts.layout.stage_rank));
  parts.num_layers = static_cast<int>(shapes.size());
  parts.input_features = widths.front().in;
  parts.output_features = widths.back().out;
  parts.input_shape = widths.front().in_shape;
  parts.output_shape = widths.back().out_shape;
  const model::RecomputePolicy recompute =
      model::recompute_policy(cfg.pipeline.recompute, cfg.pipeline.recompute_layers,
                              cfg.pipeline.recompute_halos);
  parts.stages.clear();
  for (int stage = 0; stage < P * V; ++stage) {
    if (parts.lowered.stage_to_rank[stage] != parts.layout.stage_rank) continue;
    const model::LayerRange range = ranges[stage];
    std::vector<std::unique_ptr<model::Layer>> mine =
        model::build_layers(cfg.model, backend, parts.custom_layers, range.first, range.last,
                            shapes[range.first].in_shape, parts.domain ? parts.domain->domain.get() : nullptr);
    model::init_layers(mine, cfg.seed);
    parts.stages[stage] = std::make_unique<model::StageModule>(backend, range.first, std::move(mine), recompute);
  }

  std::vector<model::Parameter*> params;
  for (auto& [index, stage] : parts.stages) {
    for (model::Parameter* p : stage->parameters()) params.push_back(p);
  }
  parts.optimizer = model::make_optimizer(cfg.optimizer, params, backend);
  check_custom_loss(parts, cfg);
}

void build_gradient_reducer(RunParts& parts, const config::Config& cfg) {
  // The transport summary is the same on every rank, so is the choice (and a refusal).
  const config::GradientSumKind gradient_sum =
      choose_gradient_sum(cfg.pipeline.gradient_sum, parts.pipeline_transport.summary);
  if (parts.layout.data_parallel == 1) return;  // nothing to sum
  std::exception_ptr error;
  try {
    if (gradient_sum == config::GradientSumKind::kNccl) {
      const NcclSupport* nccl = nccl_support();
      if (nccl == nullptr) throw Error(ErrorCode::kInternal, "gradient_sum nccl chosen without NCCL in the build");
      // Collective over the replicas of this rank's stage; every rank has its pipeline communicator by now.
      parts.reducer = nccl->create_gradient_reducer(parts.mpi->data_parallel_comm(), *parts.backend);
    } else {
      parts.reducer = std::make_unique<OrderedGradientReducer>(parts.mpi->data_parallel_group(), *parts.backend);
    }
  } catch (...) {
    error = std::current_exception();
  }
  comm::agree_or_throw(parts.mpi->world(), "data-parallel gradient sum set-up", error);
}

// The loss the training executor calls on the last stage's outputs (config loss, or the registered custom one).
// On a domain, the field loss of the block (a collective over the domain group: every block's last stage calls it
// for the same micro-batches in the same order, as their action lists are the same); its sum is the whole
// samples', the same double on every block.
LossFn loss_function(RunParts& parts, model::LossKind kind) {
  return [&parts, kind](const kernels::Tensor& output, const float* targets, int64_t global_batch,
                        kernels::Tensor& grad) {
    kernels::Backend& backend = *parts.backend;
    kernels::Tensor t = backend.from_host(output.rows(), output.cols(), targets);
    model::LossResult r =
        parts.domain ? model::compute_domain_loss(backend, *parts.domain->domain, kind, parts.output_shape.front(),
                                                  output, t, global_batch)
                     : model::compute_loss(backend, kind, output, t, global_batch, &parts.custom_loss,
                                           config::field_points(parts.output_shape));
    grad = std::move(r.grad);
    return r.sum;
  };
}

std::map<int, model::StageModule*> raw_stages(const RunParts& parts) {
  std::map<int, model::StageModule*> raw;
  for (const auto& [index, stage] : parts.stages) raw[index] = stage.get();
  return raw;
}

void build_executors(RunParts& parts, const config::Config& cfg, const std::function<void(int)>& stage_done) {
  kernels::Backend& backend = *parts.backend;
  comm::Transport& transport = *parts.pipeline_transport.transport;
  const LossFn loss = loss_function(parts, cfg.loss);
  parts.executor = std::make_unique<Executor>(parts.lowered, parts.layout.stage_rank, raw_stages(parts), backend,
                                              transport, loss, stage_done, nullptr, parts.skip_routes);
  parts.forward_only = std::make_unique<schedule::Schedule>(schedule::forward_only(parts.lowered));
  parts.predictor = std::make_unique<Executor>(*parts.forward_only, parts.layout.stage_rank, raw_stages(parts),
                                               backend, transport, loss, [](int) {}, nullptr, parts.skip_routes);
}

// What start() made after the communicators, released when the start fails on every rank: a later start builds
// them again (the duplicated communicator is kept and reused).
void release(RunParts& parts) {
  parts.executor.reset();
  parts.predictor.reset();
  parts.short_predictors.clear();
  parts.reducer.reset();
  parts.pipeline_transport = PipelineTransport{};
  parts.stages.clear();
  parts.optimizer.reset();
  parts.domain.reset();
  parts.mpi.reset();
}

// Collective, once every rank has built its stages: transport, gradient sum, executors.
void connect_stages(RunParts& parts, const config::Config& cfg, const std::function<void(int)>& stage_done) {
  // Collective and agreed inside: only once every rank has built its stages (NCCL's set-up blocks until the
  // whole pipeline joins, so no rank may still be on its way to an error).
  std::vector<config::DeviceKind> stage_devices;
  for (int stage = 0; stage < cfg.pipeline.stages; ++stage) stage_devices.push_back(cfg.device_for_stage(stage));
  parts.pipeline_transport = make_pipeline_transport(cfg.pipeline.transport, stage_devices, parts.layout.stage_rank,
                                                     *parts.mpi, *parts.backend);
  build_gradient_reducer(parts, cfg);
  build_executors(parts, cfg, stage_done);
}

// The layout the model runs on (none: the plain layers). Collective over `world` for a field model: every rank's
// declaration (sluice_trainer_set_domain) is gathered and checked against the layout's blocks (declared_domain.h),
// declared or not; without declarations the even split. A declaration for a run that is not on a domain is refused.
std::optional<config::DomainLayout> run_domain_layout(const RunParts& parts, const config::Config& cfg,
                                                      MPI_Comm world) {
  if (!config::is_field(config::input_shape_of(cfg.model))) return std::nullopt;
  const std::optional<config::DomainLayout> declared =
      gather_declared_domain(world, cfg, parts.layout.block, parts.declaration);
  if (!runs_on_domain(cfg)) {
    if (!declared) return std::nullopt;
    throw Error(ErrorCode::kInvalidArgument,
                "sluice_trainer_set_domain declared the ranks' blocks, but this run does not train on blocks: give "
                "pipeline.domain (its grid the declared one), a loss other than custom and cpu stages, and layers "
                "that run on a block (docs/DOMAIN.md)");
  }
  return domain_layout_for(cfg, declared);
}

}  // namespace

void start_run_parts(RunParts& parts, config::Config& cfg, MPI_Comm host, const SetupHooks& hooks) {
  int world_size = 1, rank = 0;
  comm::check_mpi(MPI_Comm_size(host, &world_size), "MPI_Comm_size");
  comm::check_mpi(MPI_Comm_rank(host, &rank), "MPI_Comm_rank");
  // A pure function of the config, identical on every rank: it may throw before any collective call.
  refuse_unbuilt_domain_split(cfg);
  // Collective: Sluice never sends on the host's communicator (its messages could match the host's own), so every
  // message from here on travels on this duplicate or on communicators made from it.
  if (!parts.world) parts.world = std::make_unique<comm::DuplicateComm>(host, "trainer");
  const MPI_Comm world = parts.world->get();
  // Collective: comm.timeout and comm.wait bound and shape every wait from here on.
  apply_wait_settings(cfg.comm, world);
  // Collective: pipeline.schedule auto becomes a concrete schedule before anything reads it (rank 0 decides).
  if (!cfg.pipeline.schedule) {
    const int stages = std::max(1, cfg.pipeline.stages);
    const int replicas = cfg.pipeline.data_parallel > 0 ? cfg.pipeline.data_parallel : world_size / stages;
    parts.schedule_choice_report = agree_schedule(world, cfg, parts.custom_layers, replicas);
  }
  // A pure function of the config and the world size: identical on every rank, so it may throw directly.
  parts.layout = config::make_layout(cfg, world_size, rank);
  // Collective: which ranks form a pipeline depends on the node map (rank 0 decides).
  parts.rank_order = choose_rank_order(parts, cfg, world_size);
  parts.layout = config::make_layout(cfg, world_size, rank, parts.rank_order.order);
  // Collective (a field model): the host's declared blocks; the same layout or the same error on every rank.
  const std::optional<config::DomainLayout> domain_layout = run_domain_layout(parts, cfg, world);
  parts.mpi = std::make_unique<comm::MpiContext>(world, cfg.pipeline.stages, parts.layout.stage_rank,
                                                 parts.layout.replica, parts.layout.blocks, parts.layout.block);
  // Collective over the domain group: this rank's block, before the stages built on it.
  if (domain_layout) {
    const MPI_Comm domain = parts.layout.blocks > 1 ? parts.mpi->domain_comm() : MPI_COMM_SELF;
    parts.domain = make_run_domain(*domain_layout, domain, parts.layout.block);
  }
  // Collective, before any stage is built: a cuda rank's GPU is picked by its place among the node's cuda ranks.
  const bool drives_gpu = cfg.device_for_stage(parts.layout.stage_rank) == config::DeviceKind::kCuda;
  parts.gpu_local_rank = rank_among_node_peers(parts.mpi->world(), drives_gpu);  // -1: drives no GPU

  // Everything else may fail on some ranks only (a custom layer registered on one rank, a device missing on
  // one node, a cpu_threads above one rank's cores): build locally, then agree, so that either every rank starts
  // or every rank reports an error.
  std::exception_ptr error;
  try {
    // Collective before it can throw (it counts the node's ranks first), so every rank makes the same calls.
    parts.blas_threads = apply_cpu_threads(cfg, parts.mpi->world(), !drives_gpu);
    build_local_state(parts, cfg);
    if (hooks.local_checks) hooks.local_checks();
  } catch (...) {
    error = std::current_exception();
  }
  try {
    comm::agree_or_throw(parts.mpi->world(), "sluice_trainer_start", error);
    connect_stages(parts, cfg, hooks.stage_done);
  } catch (...) {
    release(parts);
    throw;
  }
}

Executor& RunParts::predictor_for(int microbatches, int configured_microbatches) {
  if (microbatches == configured_microbatches) return *predictor;
  auto& entry = short_predictors[microbatches];
  if (!entry.second) {
    // The same construction as build_executors' predictor, over fewer micro-batches.
    entry.first = std::make_unique<schedule::Schedule>(schedule::forward_only(lowered, microbatches));
    auto no_loss = [](const kernels::Tensor&, const float*, int64_t, kernels::Tensor&) { return 0.0; };
    entry.second = std::make_unique<Executor>(*entry.first, layout.stage_rank, raw_stages(*this), *backend,
                                              *pipeline_transport.transport, no_loss, [](int) {}, nullptr,
                                              skip_routes);
  }
  return *entry.second;
}

}  // namespace sluice::runtime
