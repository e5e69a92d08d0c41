#include "core/runtime/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include "core/common/error.h"
#include "core/model/loss.h"
#include "core/model/partition.h"
#include "core/comm/agreement.h"
#include "core/comm/duplicate_comm.h"
#include "core/comm/timeout_as_failure.h"
#include "core/runtime/gradient_sum_choice.h"
#include "core/runtime/nccl_support.h"
#include "core/runtime/node_ranks.h"
#include "core/runtime/numeric_check.h"
#include "core/runtime/ordered_gradient_reducer.h"
#include "core/runtime/placement.h"
#include "core/schedule/forward_only.h"
#include "core/runtime/class_targets.h"
#include "core/runtime/cpu_threads.h"
#include "core/data/normalization_file.h"
#include "core/runtime/rank_order_choice.h"
#include "core/runtime/wait_setup.h"
#include "core/runtime/schedule_choice.h"
#include "core/schedule/generators.h"
#include "core/schedule/lowering.h"
#include "core/schedule/validator.h"
#include "kernels/backend_registry.h"
#include "kernels/gemm_precision.h"

namespace sluice::runtime {

Trainer::Trainer(MPI_Comm world, config::Config cfg, model::CustomLayerRegistry custom_layers)
    : world_in_(world), cfg_(std::move(cfg)), custom_layers_(std::move(custom_layers)) {}

Trainer::~Trainer() = default;

void Trainer::start() {
  if (started_) throw Error(ErrorCode::kState, "trainer is already started");
  int world_size = 1, rank = 0;
  comm::check_mpi(MPI_Comm_size(world_in_, &world_size), "MPI_Comm_size");
  comm::check_mpi(MPI_Comm_rank(world_in_, &rank), "MPI_Comm_rank");
  // Collective: Sluice never sends on the host's communicator (its messages could match the host's own), so every
  // message from here on travels on this duplicate or on communicators made from it.
  if (!world_) world_ = std::make_unique<comm::DuplicateComm>(world_in_, "trainer");
  const MPI_Comm world = world_->get();
  // Collective: comm.timeout and comm.wait bound and shape every wait from here on.
  apply_wait_settings(cfg_.comm, world);
  // Collective: pipeline.schedule auto becomes a concrete schedule before anything reads it (rank 0 decides).
  if (!cfg_.pipeline.schedule) {
    const int stages = std::max(1, cfg_.pipeline.stages);
    const int replicas = cfg_.pipeline.data_parallel > 0 ? cfg_.pipeline.data_parallel : world_size / stages;
    schedule_choice_report_ = agree_schedule(world, cfg_, custom_layers_, replicas);
  }
  // A pure function of the config and the world size: identical on every rank, so it may throw directly.
  layout_ = config::make_layout(cfg_, world_size, rank);
  // Collective: which ranks form a pipeline depends on the node map (rank 0 decides).
  rank_order_ = choose_rank_order(world_size);
  layout_ = config::make_layout(cfg_, world_size, rank, rank_order_.order);
  mpi_ = std::make_unique<comm::MpiContext>(world, cfg_.pipeline.stages, layout_.stage_rank, layout_.replica);
  // Collective, before any stage is built: a cuda rank's GPU is picked by its place among the node's cuda ranks.
  const bool drives_gpu = cfg_.device_for_stage(layout_.stage_rank) == config::DeviceKind::kCuda;
  const int gpu_rank = rank_among_node_peers(mpi_->world(), drives_gpu);
  gpu_local_rank_ = gpu_rank;  // -1 on a rank that drives no GPU

  // Everything else may fail on some ranks only (a custom layer registered on one rank, a device missing on
  // one node, a cpu_threads above one rank's cores): build locally, then agree, so that either every rank starts
  // or every rank reports an error.
  std::exception_ptr error;
  try {
    // Collective before it can throw (it counts the node's ranks first), so every rank makes the same calls.
    blas_threads_ = apply_cpu_threads(cfg_, mpi_->world(), !drives_gpu);
    build_local_state();
  } catch (...) {
    error = std::current_exception();
  }
  try {
    comm::agree_or_throw(mpi_->world(), "sluice_trainer_start", error);
    // Collective and agreed inside: only once every rank has built its stages (NCCL's set-up blocks until the
    // whole pipeline joins, so no rank may still be on its way to an error).
    std::vector<config::DeviceKind> stage_devices;
    for (int stage = 0; stage < cfg_.pipeline.stages; ++stage) stage_devices.push_back(cfg_.device_for_stage(stage));
    pipeline_transport_ =
        make_pipeline_transport(cfg_.pipeline.transport, stage_devices, layout_.stage_rank, *mpi_, *backend_);
    build_gradient_reducer();
    build_executors();
  } catch (...) {
    executor_.reset();
    predictor_.reset();
    short_predictors_.clear();
    reducer_.reset();
    pipeline_transport_ = PipelineTransport{};
    stages_.clear();
    optimizer_.reset();
    mpi_.reset();
    throw;
  }
  // Submitted samples go where the step reads them: inputs to the first stage's ranks, targets to the last's.
  submitted_samples_.configure(input_features_, output_features_, stages_.count(0) != 0,
                               stages_.count(lowered_.num_stages() - 1) != 0, cfg_.data.replay_capacity);
  started_ = true;
}

config::RankOrderChoice Trainer::choose_rank_order(int world_size) {
  const int P = cfg_.pipeline.stages;
  const config::RankOrder requested = cfg_.pipeline.rank_order;
  return agree_rank_order(world_->get(), requested, [&](const std::vector<int>& nodes) {
    const int replicas = world_size / P;
    if (P == 1 || replicas == 1) {  // one pipeline or one stage: every order is the same layout
      return config::choose_rank_order(requested, nodes, P,
                                       config::StepTraffic{{}, std::vector<std::vector<int64_t>>(P)});
    }
    const std::vector<model::LayerShape> shapes = model::model_shape(cfg_.model, custom_layers_);
    const std::vector<int> split =
        model::choose_split(cfg_.pipeline.split, model::flops_of(shapes), P * cfg_.pipeline.chunks);
    const schedule::Schedule order =
        schedule::make_schedule(config::resolved_schedule_name(cfg_.pipeline.schedule), P, cfg_.pipeline.microbatches,
                                cfg_.pipeline.chunks);
    return config::choose_rank_order(requested, nodes, P,
                                     step_traffic(cfg_, shapes, split, order.stage_to_rank, replicas));
  });
}

void Trainer::build_local_state() {
  const int P = cfg_.pipeline.stages;
  const int V = cfg_.pipeline.chunks;
  // Schedule first: a bad (schedule, P, M, V) combination is a config error worth reporting before
  // anything is allocated.
  const char* kind = config::resolved_schedule_name(cfg_.pipeline.schedule);
  schedule::Schedule compute = schedule::make_schedule(kind, P, cfg_.pipeline.microbatches, V);
  // Lowered with the costs it was planned with (pipeline.costs), so the SEND/RECVs sit as `sluice plan` shows them;
  // the compute order, hence every result bit, is the same either way.
  const auto costs = planned_costs(cfg_, layout_.data_parallel);
  lowered_ = costs ? schedule::lower(compute, *costs) : schedule::lower(compute);
  schedule::validate(lowered_);

  // Each pipeline rank runs on its stage's device (data-parallel replicas of a stage share it).
  const config::DeviceKind device = cfg_.device_for_stage(layout_.stage_rank);
  backend_ = &kernels::backend_for({config::device_kind_name(device), gpu_local_rank_});
  kernels::Backend& backend = *backend_;
  // In a mixed pipeline gemm_precision is meant for the cuda stages: cpu stages get fp32, which is all the CPU
  // backend accepts (it refuses tf32/bf16 rather than ignore them).
  backend.set_gemm_precision(cfg_.gemm_precision_for_stage(layout_.stage_rank));
  // Shapes and costs from the config alone: a rank builds (allocates) only the layers of its own chunks.
  const std::vector<model::LayerShape> shapes = model::model_shape(cfg_.model, custom_layers_);
  num_layers_ = static_cast<int>(shapes.size());
  input_features_ = shapes.front().in;
  output_features_ = shapes.back().out;
  input_shape_ = shapes.front().in_shape;
  output_shape_ = shapes.back().out_shape;
  const std::vector<model::LayerRange> ranges =
      model::split_to_ranges(model::choose_split(cfg_.pipeline.split, model::flops_of(shapes), P * V));

  const model::RecomputePolicy recompute =
      model::recompute_policy(cfg_.pipeline.recompute, cfg_.pipeline.recompute_layers);
  stages_.clear();
  for (int stage = 0; stage < P * V; ++stage) {
    if (lowered_.stage_to_rank[stage] != layout_.stage_rank) continue;
    const model::LayerRange range = ranges[stage];
    std::vector<std::unique_ptr<model::Layer>> mine =
        model::build_layers(cfg_.model, backend, custom_layers_, range.first, range.last,
                            shapes[range.first].in_shape);
    model::init_layers(mine, cfg_.seed);
    stages_[stage] = std::make_unique<model::StageModule>(backend, ranges[stage].first, std::move(mine), recompute);
  }

  std::vector<model::Parameter*> params;
  for (auto& [index, stage] : stages_) {
    for (model::Parameter* p : stage->parameters()) params.push_back(p);
  }
  optimizer_ = model::make_optimizer(cfg_.optimizer, params, backend);
  loss_kind_ = cfg_.loss;
  check_custom_loss();
  // The output width is known here even with a custom last layer: given statistics must match it (kConfig).
  normalization_.configure(data::with_file_statistics(cfg_.normalization), input_features_, output_features_,
                           config::field_points(input_shape_), config::field_points(output_shape_));
}

void Trainer::build_executors() {
  kernels::Backend& backend = *backend_;
  comm::Transport& transport = *pipeline_transport_.transport;
  std::map<int, model::StageModule*> raw;
  for (auto& [index, stage] : stages_) raw[index] = stage.get();
  auto loss = [this](const kernels::Tensor& out, const float* targets, int64_t global_batch, kernels::Tensor& grad) {
    return loss_of(out, targets, global_batch, grad);
  };
  executor_ = std::make_unique<Executor>(lowered_, layout_.stage_rank, raw, backend, transport, loss,
                                         [this](int stage) { start_reduction(stage); });
  forward_only_ = std::make_unique<schedule::Schedule>(schedule::forward_only(lowered_));
  predictor_ = std::make_unique<Executor>(*forward_only_, layout_.stage_rank, raw, backend, transport, loss,
                                          [](int) {});
}

double Trainer::loss_of(const kernels::Tensor& output, const float* targets, int64_t global_batch,
                        kernels::Tensor& grad) {
  kernels::Backend& backend = *backend_;
  kernels::Tensor t = backend.from_host(output.rows(), output.cols(), targets);
  model::LossResult r = model::compute_loss(backend, loss_kind_, output, t, global_batch, &custom_loss_,
                                            config::field_points(output_shape_));
  grad = std::move(r.grad);
  return r.sum;
}

void Trainer::build_gradient_reducer() {
  // The transport summary is the same on every rank, so is the choice (and a refusal).
  const config::GradientSumKind gradient_sum =
      choose_gradient_sum(cfg_.pipeline.gradient_sum, pipeline_transport_.summary);
  if (layout_.data_parallel == 1) return;  // nothing to sum
  std::exception_ptr error;
  try {
    if (gradient_sum == config::GradientSumKind::kNccl) {
      const NcclSupport* nccl = nccl_support();
      if (nccl == nullptr) throw Error(ErrorCode::kInternal, "gradient_sum nccl chosen without NCCL in the build");
      // Collective over the replicas of this rank's stage; every rank has its pipeline communicator by now.
      reducer_ = nccl->create_gradient_reducer(mpi_->data_parallel_comm(), *backend_);
    } else {
      reducer_ = std::make_unique<OrderedGradientReducer>(mpi_->data_parallel_group(), *backend_);
    }
  } catch (...) {
    error = std::current_exception();
  }
  comm::agree_or_throw(mpi_->world(), "data-parallel gradient sum set-up", error);
}

void Trainer::start_reduction(int stage) {
  if (reducer_ && reduce_this_call_) reducer_->start(stage, stages_.at(stage)->parameters());
}

void Trainer::finish_reductions() {
  if (reducer_) reducer_->finish();
}

void Trainer::join_with_error(const std::string& function, const Error& error) {
  if (!started_) throw error;
  comm::agree_or_throw(mpi_->world(), arguments_of(function), std::optional<Error>(error), comm::arrival_deadline());
  throw error;  // not reached: the agreement throws on every rank
}

// A training call's data: a batch whose host copy cannot exist, else the first non-finite value this rank reads.
std::exception_ptr Trainer::training_data_problem(const float* inputs, const float* targets, int64_t rows) const {
  // Only a batch whose host copy can exist is read: a rows x features that overflows or exceeds this process's
  // memory is the bad size the step itself would report (kInvalidArgument naming the bytes), found before any of
  // the caller's rows are touched. The probe is not written to, so it costs an allocation, not a fill.
  const int64_t features = std::max(input_features_, output_features_);
  try {
    kernels::Tensor::host_uninitialized(rows, features);
  } catch (const Error& e) {
    return std::make_exception_ptr(Error(ErrorCode::kInvalidArgument,
                                         "a batch of " + std::to_string(rows) + " rows x " + std::to_string(features) +
                                             " features (4 bytes each) cannot be held in memory: " + e.what()));
  }
  std::string problem = first_non_finite(stages_.count(0) ? inputs : nullptr, rows, input_features_, "inputs");
  const bool last_stage = stages_.count(lowered_.num_stages() - 1) != 0;
  if (problem.empty() && last_stage && cfg_.loss == model::LossKind::kCrossEntropy) {
    // Before the finiteness check, so a NaN there is named by its sample and point like any bad class target.
    const std::string class_problem = first_invalid_class_target(targets, rows, output_shape_);
    if (!class_problem.empty()) {
      return std::make_exception_ptr(Error(ErrorCode::kInvalidArgument, class_problem + " on rank " +
                                                                            std::to_string(layout_.rank) +
                                                                            " (no update applied)"));
    }
  }
  if (problem.empty() && last_stage) problem = first_non_finite(targets, rows, output_features_, "targets");
  if (problem.empty()) return nullptr;
  return std::make_exception_ptr(
      Error(ErrorCode::kNumeric, problem + " on rank " + std::to_string(layout_.rank) + " (no update applied)"));
}

void Trainer::check_step_inputs(const char* function, const float* inputs, const float* targets, int64_t rows,
                                bool targets_everywhere, bool any_batch) {
  std::string problem;
  if (rows <= 0) {
    problem = "batch must be positive, got " + std::to_string(rows) + " (rank " + std::to_string(layout_.rank) + ")";
  } else if (!any_batch && rows < cfg_.pipeline.microbatches) {
    problem = "batch of " + std::to_string(rows) + " rows on rank " + std::to_string(layout_.rank) +
              " is smaller than pipeline.microbatches (" + std::to_string(cfg_.pipeline.microbatches) +
              "); every micro-batch needs at least one row";
  } else if (stages_.count(0) && inputs == nullptr) {
    problem = "rank " + std::to_string(layout_.rank) + " holds the first stage but inputs is NULL";
  } else if (targets == nullptr && (targets_everywhere || stages_.count(lowered_.num_stages() - 1))) {
    problem = targets_everywhere ? "outputs is NULL on rank " + std::to_string(layout_.rank)
                                 : "rank " + std::to_string(layout_.rank) + " holds the last stage but targets is NULL";
  }
  std::exception_ptr error;
  if (!problem.empty()) {
    error = std::make_exception_ptr(Error(ErrorCode::kInvalidArgument, problem));
  } else if (!targets_everywhere) {  // a training call: its data must be finite (numeric_check.h)
    error = training_data_problem(inputs, targets, rows);
  }
  // Agree before any message is sent, so a bad argument on one rank cannot leave the others waiting.
  comm::agree_or_throw(mpi_->world(), arguments_of(function), error, comm::arrival_deadline());
  // Every rank must pass the same batch: the messages are sized by it and the loss is a mean over
  // rows x replicas samples.
  const double mine = static_cast<double>(rows);
  const std::vector<double> all = mpi_->world_group().all_gather(&mine, 1);
  for (size_t r = 1; r < all.size(); ++r) {
    if (all[r] != all[0]) {
      throw Error(ErrorCode::kInvalidArgument, "ranks passed different batch sizes (rank 0: " +
                                                   std::to_string(static_cast<int64_t>(all[0])) + ", rank " +
                                                   std::to_string(r) + ": " +
                                                   std::to_string(static_cast<int64_t>(all[r])) +
                                                   "); every rank must pass the same batch");
    }
  }
}

void Trainer::check_window_batch(int64_t rows) const {
  const int K = cfg_.optimizer.accumulate;
  if (window_position_ > 0 && window_rows_ != 0 && rows != window_rows_) {
    // Same on every rank (check_step_inputs agreed on rows), so every rank refuses alike.
    throw Error(ErrorCode::kInvalidArgument,
                "batch of " + std::to_string(rows) + " rows in call " + std::to_string(window_position_ + 1) + " of " +
                    std::to_string(K) + " of an accumulation window whose calls pass " + std::to_string(window_rows_) +
                    " rows; every call of a window (optimizer.accumulate) must pass the same batch");
  }
}

StepData Trainer::training_step_data(const float* inputs, const float* targets, int64_t rows) const {
  const int K = cfg_.optimizer.accumulate;
  const int M = cfg_.pipeline.microbatches;
  StepData data;
  data.inputs = inputs;
  data.targets = targets;
  data.rows = rows;
  data.input_features = input_features_;
  data.target_features = output_features_;
  // The window's samples: each call's gradient carries 1/(rows x replicas x K), so the window's sum is the
  // gradient of the mean over the whole window, as one call of K x rows would compute it.
  data.global_batch = rows * layout_.data_parallel * K;
  data.seed = cfg_.seed;
  data.step = step_;
  data.training = true;
  // The micro-batch numbers one call of K x rows (K x M micro-batches) would give this call's micro-batches.
  data.microbatch_offset = (layout_.replica * K + window_position_) * M;
  // This call's place in the sample stream (StepData::first_sample): the samples of every earlier call.
  data.first_sample = data_position_.samples() + static_cast<uint64_t>(layout_.replica) * static_cast<uint64_t>(rows);
  return data;
}

void Trainer::agree_on_call(const StepOutcome& outcome, bool window_start) {
  // Agree on failure across all ranks: the step is dropped everywhere, parameters stay as they were. A failed
  // call has added part of its micro-batches on some ranks only, so the whole window is dropped.
  const int K = cfg_.optimizer.accumulate;
  std::string what = "step " + std::to_string(step_ + 1);
  if (K > 1) what += ", call " + std::to_string(window_position_ + 1) + " of " + std::to_string(K);
  what += K > 1 && !window_start ? " (no update applied; the window's earlier calls are dropped)" : " (no update applied)";
  try {
    comm::agree_or_throw(mpi_->world(), what, outcome.error);
  } catch (...) {
    for (auto& [index, stage] : stages_) stage->zero_grad();
    window_position_ = 0;
    data_position_.drop_window();
    throw;
  }
}

StepResult Trainer::train_step(const float* inputs, const float* targets, int64_t rows) {
  if (!started_) throw Error(ErrorCode::kState, "trainer is not started");
  check_step_inputs("sluice_train_step", inputs, targets, rows, false);
  check_window_batch(rows);
  data_position_.begin_call(step_, cfg_.optimizer.accumulate, window_position_, rows * layout_.data_parallel);
  if (normalization_.pending()) compute_auto_normalization(inputs, targets, rows);  // collective, first call
  const NormalizedBatch batch = normalized_batch(inputs, targets, rows);
  const int K = cfg_.optimizer.accumulate;
  const bool window_start = window_position_ == 0;
  const bool window_end = window_position_ + 1 == K;
  for (auto& [index, stage] : stages_) {
    if (window_start) stage->zero_grad();  // later calls of the window add to the partial sums
    stage->reset_peaks();
  }
  auto t0 = std::chrono::steady_clock::now();
  const StepData data = training_step_data(batch.in_ptr, batch.target_ptr, rows);
  counters_ = StepCounters{};
  reduce_this_call_ = window_end;  // the data-parallel sum runs once per window, on its full sums
  StepOutcome outcome = comm::timeout_as_failure([&] {
    mpi_->pipeline_group().barrier();  // a common start makes the measured bubble meaningful
    t0 = std::chrono::steady_clock::now();
    StepOutcome run = executor_->run(data, counters_, tracing_);
    if (window_end) finish_reductions();
    return run;
  });
  if (!outcome.error) {  // a NaN or Inf about to reach the parameters fails the call like any failure
    const bool holds_loss = stages_.count(lowered_.num_stages() - 1) != 0;
    if (std::optional<Error> numeric = non_finite_in_step(stages_, *backend_, outcome.loss_sum, holds_loss, rows)) {
      outcome.error = std::make_exception_ptr(*numeric);
    }
  }
  agree_on_call(outcome, window_start);
  data_position_.advance(rows * layout_.data_parallel);

  StepResult result;
  if (window_end) {
    result.grad_norm = clip_gradients();
    optimizer_->set_lr(next_learning_rate());
    optimizer_->step();
    ++step_;
    window_position_ = 0;
  } else {
    window_rows_ = rows;
    ++window_position_;
    result.stepped = false;
    result.pending_calls = window_position_;
  }

  double loss_sum = outcome.loss_sum;
  mpi_->world_group().ordered_sum(&loss_sum, 1);
  result.step = step_;
  result.loss = loss_sum / static_cast<double>(rows * layout_.data_parallel);  // this call's samples
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  counters_.step_seconds = result.seconds;
  peak_stash_bytes_all_ = std::max(peak_stash_bytes_all_, counters_.peak_stash_bytes);
  last_bubble_ = measure_bubble();
  last_ = result;
  return result;
}

double Trainer::clip_gradients() {
  const double max_norm = cfg_.optimizer.clip_grad_norm;
  if (max_norm <= 0.0) return 0.0;
  // Per-layer sums of squares in a vector indexed by global layer; each entry is non-zero on exactly one
  // pipeline rank, so the ordered sum over ranks is exact and the norm is independent of the partition.
  std::vector<double> per_layer(num_layers_, 0.0);
  kernels::Backend& backend = *backend_;
  for (auto& [index, stage] : stages_) {
    for (model::Parameter* p : stage->parameters()) per_layer[p->layer_index] += backend.sum_of_squares(p->grad);
  }
  mpi_->pipeline_group().ordered_sum(per_layer.data(), num_layers_);
  double total = 0.0;
  for (double s : per_layer) total += s;
  const double norm = std::sqrt(total);
  if (norm > max_norm) {
    const float coefficient = static_cast<float>(max_norm / (norm + 1e-6));
    for (auto& [index, stage] : stages_) {
      for (model::Parameter* p : stage->parameters()) backend.scale(coefficient, p->grad);
    }
  }
  return norm;
}

double Trainer::measure_bubble() {
  // Over the pipeline's span only, as the simulator defines it: the optimizer step after the drain is not
  // schedule idle time.
  const double mine[2] = {counters_.busy_total(), counters_.pipeline_seconds};
  std::vector<double> all = mpi_->pipeline_group().all_gather(mine, 2);
  double busy = 0.0, makespan = 0.0;
  for (int r = 0; r < layout_.stages; ++r) {
    busy += all[2 * r];
    makespan = std::max(makespan, all[2 * r + 1]);
  }
  return makespan > 0.0 ? 1.0 - busy / (layout_.stages * makespan) : 0.0;
}

std::string Trainer::gradient_sum_name() const { return reducer_ ? reducer_->name() : ""; }

}  // namespace sluice::runtime
