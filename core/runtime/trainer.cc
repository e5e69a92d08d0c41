#include "core/runtime/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include "core/comm/agreement.h"
#include "core/comm/timeout_as_failure.h"
#include "core/common/error.h"
#include "core/runtime/class_targets.h"
#include "core/data/normalization_file.h"
#include "core/runtime/numeric_check.h"

namespace sluice::runtime {

Trainer::Trainer(MPI_Comm world, config::Config cfg, model::CustomLayerRegistry custom_layers)
    : world_in_(world), cfg_(std::move(cfg)), window_(cfg_.optimizer.accumulate) {
  parts_.custom_layers = std::move(custom_layers);
}

Trainer::~Trainer() = default;

void Trainer::start(std::optional<DeclaredDomain> declared) {
  if (started_) throw Error(ErrorCode::kState, "trainer is already started");
  SetupHooks hooks;
  // The output width is known once the stages are built, even with a custom last layer: given statistics must
  // match it (kConfig, agreed with the set-up's other local failures).
  hooks.local_checks = [this] {
    normalization_.configure(data::with_file_statistics(cfg_.normalization), parts_.input_features,
                             parts_.output_features, config::field_points(parts_.input_shape),
                             config::field_points(parts_.output_shape));
  };
  hooks.stage_done = [this](int stage) { start_reduction(stage); };
  parts_.declaration = std::move(declared);  // gathered across the ranks by the set-up
  start_run_parts(parts_, cfg_, world_in_, hooks);
  // Submitted samples go where the step reads them: inputs to the first stage's ranks, targets to the last's.
  submitted_samples_.configure(parts_.input_features, parts_.output_features, parts_.holds_first_stage(),
                               parts_.holds_last_stage(), cfg_.data.replay_capacity);
  started_ = true;
}

TrainerState Trainer::state() const {
  TrainerState state;
  state.steps_done = step_;
  state.accumulation_position = window_.position();
  state.accumulation_call_samples = window_.call_samples();
  state.optimizer_steps = parts_.optimizer ? parts_.optimizer->step_count() : 0;
  state.learning_rate_override = lr_override_;
  state.data_position = data_position_;
  state.normalization = normalization_;
  return state;
}

void Trainer::restore(TrainerState state) {
  if (!started_) throw Error(ErrorCode::kState, "trainer is not started");
  if (state.accumulation_position == 0) {
    for (const auto& [index, stage] : parts_.stages) stage->zero_grad();  // no partial sums: a fresh window
  }
  window_.restore(state.accumulation_position, state.accumulation_call_samples);
  step_ = state.steps_done;
  parts_.optimizer->set_step_count(state.optimizer_steps);
  lr_override_ = state.learning_rate_override;
  data_position_ = state.data_position;
  normalization_ = std::move(state.normalization);
  if (state.samples) {
    const SampleStoreContents& samples = *state.samples;
    submitted_samples_.restore(samples.inputs, samples.targets, samples.held, samples.draws);
  }
}

void Trainer::append_samples(const float* inputs, const float* targets, int64_t count) {
  submitted_samples_.append(inputs, targets, count);
}

void Trainer::start_reduction(int stage) {
  // On a domain, first the call's per-tile parameter-gradient partials into the gradients, in global tile order (a
  // collective over the domain group: every block runs the same action list, so its stages end in the same order).
  // Every call, not only the window's last: the gradients then hold the window's partial sums after each call, as
  // without a domain (a checkpoint inside a window saves them), and every split adds the same partials the same way.
  if (parts_.domain) parts_.stages.at(stage)->finish_domain_step();
  if (parts_.reducer && reduce_this_call_) parts_.reducer->start(stage, parts_.stages.at(stage)->parameters());
}

void Trainer::join_with_error(const std::string& function, const Error& error) {
  if (!started_) throw error;
  comm::agree_or_throw(parts_.mpi->world(), arguments_of(function), std::optional<Error>(error),
                       comm::arrival_deadline());
  throw error;  // not reached: the agreement throws on every rank
}

// A training call's data: a batch whose host copy cannot exist, else the first non-finite value this rank reads.
std::exception_ptr Trainer::training_data_problem(const float* inputs, const float* targets, int64_t rows) const {
  // Only a batch whose host copy can exist is read: a rows x features that overflows or exceeds this process's
  // memory is the bad size the step itself would report (kInvalidArgument naming the bytes), found before any of
  // the caller's rows are touched. The probe is not written to, so it costs an allocation, not a fill.
  const int64_t features = std::max(parts_.input_features, parts_.output_features);
  try {
    kernels::Tensor::host_uninitialized(rows, features);
  } catch (const Error& e) {
    return std::make_exception_ptr(Error(ErrorCode::kInvalidArgument,
                                         "a batch of " + std::to_string(rows) + " rows x " + std::to_string(features) +
                                             " features (4 bytes each) cannot be held in memory: " + e.what()));
  }
  std::string problem =
      first_non_finite(parts_.holds_first_stage() ? inputs : nullptr, rows, parts_.input_features, "inputs");
  const bool last_stage = parts_.holds_last_stage();
  if (problem.empty() && last_stage && cfg_.loss == model::LossKind::kCrossEntropy) {
    // Before the finiteness check, so a NaN there is named by its sample and point like any bad class target.
    const std::string class_problem = first_invalid_class_target(targets, rows, parts_.output_shape);
    if (!class_problem.empty()) {
      return std::make_exception_ptr(Error(ErrorCode::kInvalidArgument, class_problem + " on rank " +
                                                                            std::to_string(layout().rank) +
                                                                            " (no update applied)"));
    }
  }
  if (problem.empty() && last_stage) problem = first_non_finite(targets, rows, parts_.output_features, "targets");
  if (problem.empty()) return nullptr;
  return std::make_exception_ptr(
      Error(ErrorCode::kNumeric, problem + " on rank " + std::to_string(layout().rank) + " (no update applied)"));
}

void Trainer::check_step_inputs(const char* function, const float* inputs, const float* targets, int64_t rows,
                                bool targets_everywhere, bool any_batch) {
  const std::string rank = std::to_string(layout().rank);
  std::string problem;
  if (rows <= 0) {
    problem = "batch must be positive, got " + std::to_string(rows) + " (rank " + rank + ")";
  } else if (!any_batch && rows < cfg_.pipeline.microbatches) {
    problem = "batch of " + std::to_string(rows) + " rows on rank " + rank + " is smaller than pipeline.microbatches (" +
              std::to_string(cfg_.pipeline.microbatches) + "); every micro-batch needs at least one row";
  } else if (parts_.holds_first_stage() && inputs == nullptr) {
    problem = "rank " + rank + " holds the first stage but inputs is NULL";
  } else if (targets == nullptr && (targets_everywhere || parts_.holds_last_stage())) {
    problem = targets_everywhere ? "outputs is NULL on rank " + rank
                                 : "rank " + rank + " holds the last stage but targets is NULL";
  }
  std::exception_ptr error;
  if (!problem.empty()) {
    error = std::make_exception_ptr(Error(ErrorCode::kInvalidArgument, problem));
  } else if (!targets_everywhere) {  // a training call: its data must be finite (numeric_check.h)
    error = training_data_problem(inputs, targets, rows);
  }
  // Agree before any message is sent, so a bad argument on one rank cannot leave the others waiting.
  comm::agree_or_throw(parts_.mpi->world(), arguments_of(function), error, comm::arrival_deadline());
  // Every rank must pass the same batch: the messages are sized by it and the loss is a mean over
  // rows x replicas samples.
  const double mine = static_cast<double>(rows);
  const std::vector<double> all = parts_.mpi->world_group().all_gather(&mine, 1);
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

StepData Trainer::training_step_data(const float* inputs, const float* targets, int64_t rows) const {
  const int K = window_.accumulate();
  const int M = cfg_.pipeline.microbatches;
  const config::Layout& layout = parts_.layout;
  StepData data;
  data.inputs = inputs;
  data.targets = targets;
  data.rows = rows;
  data.input_features = parts_.input_features;
  data.target_features = parts_.output_features;
  // The window's samples: each call's gradient carries 1/(rows x replicas x K), so the window's sum is the
  // gradient of the mean over the whole window, as one call of K x rows would compute it.
  data.global_batch = rows * layout.data_parallel * K;
  data.seed = cfg_.seed;
  data.step = step_;
  data.training = true;
  // The micro-batch numbers one call of K x rows (K x M micro-batches) would give this call's micro-batches.
  data.microbatch_offset = (layout.replica * K + window_.position()) * M;
  // This call's place in the sample stream (StepData::first_sample): the samples of every earlier call.
  data.first_sample = data_position_.samples() + static_cast<uint64_t>(layout.replica) * static_cast<uint64_t>(rows);
  return data;
}

StepOutcome Trainer::run_call(const StepData& data, std::chrono::steady_clock::time_point& t0) {
  const bool window_end = window_.ends();
  reduce_this_call_ = window_end;  // the data-parallel sum runs once per window, on its full sums
  StepOutcome outcome = comm::timeout_as_failure([&] {
    parts_.mpi->pipeline_group().barrier();  // a common start makes the measured bubble meaningful
    t0 = std::chrono::steady_clock::now();
    StepOutcome run = parts_.executor->run(data, stats_.counters, tracing_);
    if (window_end && parts_.reducer) parts_.reducer->finish();
    return run;
  });
  if (!outcome.error) {  // a NaN or Inf about to reach the parameters fails the call like any failure
    const bool holds_loss = parts_.holds_last_stage();
    if (std::optional<Error> numeric =
            non_finite_in_step(parts_.stages, *parts_.backend, outcome.loss_sum, holds_loss, data.rows)) {
      outcome.error = std::make_exception_ptr(*numeric);
    }
  }
  return outcome;
}

void Trainer::agree_on_call(const StepOutcome& outcome, bool window_start) {
  // Agree on failure across all ranks: the step is dropped everywhere, parameters stay as they were. A failed
  // call has added part of its micro-batches on some ranks only, so the whole window is dropped.
  const int K = window_.accumulate();
  std::string what = "step " + std::to_string(step_ + 1);
  if (K > 1) what += ", call " + std::to_string(window_.position() + 1) + " of " + std::to_string(K);
  what += K > 1 && !window_start ? " (no update applied; the window's earlier calls are dropped)" : " (no update applied)";
  try {
    comm::agree_or_throw(parts_.mpi->world(), what, outcome.error);
  } catch (...) {
    drop_domain_partials();
    for (auto& [index, stage] : parts_.stages) stage->zero_grad();
    window_.drop();
    data_position_.drop_window();
    throw;
  }
}

void Trainer::drop_domain_partials() {
  if (!parts_.domain) return;
  // A failed call may have left per-tile partials that no finish_domain_step took (every rank drops the window
  // together, so the collective is matched); zero_grad then drops what they added.
  try {
    for (auto& [index, stage] : parts_.stages) stage->finish_domain_step();
  } catch (...) {  // the call's own failure is what the caller reports
  }
}

StepResult Trainer::train_step(const float* inputs, const float* targets, int64_t rows) {
  if (!started_) throw Error(ErrorCode::kState, "trainer is not started");
  check_step_inputs("sluice_train_step", inputs, targets, rows, false);
  window_.check_batch(rows, layout().data_parallel);  // rows was agreed: every rank refuses alike
  data_position_.begin_call(step_, window_.accumulate(), window_.position(), rows * layout().data_parallel);
  if (normalization_.pending()) compute_auto_normalization(inputs, targets, rows);  // collective, first call
  const NormalizedBatch batch = normalized_batch(inputs, targets, rows);
  const bool window_start = window_.starts();
  for (auto& [index, stage] : parts_.stages) {
    if (window_start) stage->zero_grad();  // later calls of the window add to the partial sums
    stage->reset_peaks();
  }
  auto t0 = std::chrono::steady_clock::now();
  const StepData data = training_step_data(batch.in_ptr, batch.target_ptr, rows);
  stats_.counters = StepCounters{};
  const DomainSent sent_before = domain_sent();
  const StepOutcome outcome = run_call(data, t0);
  agree_on_call(outcome, window_start);
  data_position_.advance(rows * layout().data_parallel);

  StepResult result;
  if (window_.ends()) {
    result.grad_norm = clip_gradients();
    parts_.optimizer->set_lr(next_learning_rate());
    parts_.optimizer->step();
    ++step_;
    window_.advance(rows, layout().data_parallel);
  } else {
    window_.advance(rows, layout().data_parallel);
    result.stepped = false;
    result.pending_calls = window_.position();
  }
  count_domain_sent(sent_before);
  return finish_call(result, outcome.loss_sum, rows, t0);
}

Trainer::DomainSent Trainer::domain_sent() const {
  if (!parts_.domain) return {};
  const comm::HaloTraffic& halo = parts_.domain->channel->totals();
  return {halo.bytes_sent, halo.messages_sent, parts_.domain->gather->totals().bytes_sent};
}

void Trainer::count_domain_sent(const DomainSent& before) {
  const DomainSent now = domain_sent();
  stats_.counters.halo_bytes_sent = now.halo_bytes - before.halo_bytes;
  stats_.counters.halo_messages_sent = now.halo_messages - before.halo_messages;
  stats_.counters.gather_bytes_sent = now.gather_bytes - before.gather_bytes;
}

StepResult Trainer::finish_call(StepResult result, double loss_sum, int64_t rows,
                                std::chrono::steady_clock::time_point t0) {
  // On a domain every block's last stage holds the whole samples' loss (compute_domain_loss): block 0's alone
  // enters the sum, so each sample counts once, exactly (adding zeros changes no bit).
  if (parts_.layout.block != 0) loss_sum = 0.0;
  parts_.mpi->world_group().ordered_sum(&loss_sum, 1);
  result.step = step_;
  result.loss = loss_sum / static_cast<double>(rows * layout().data_parallel);  // this call's samples
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  stats_.counters.step_seconds = result.seconds;
  stats_.peak_stash_bytes = std::max(stats_.peak_stash_bytes, stats_.counters.peak_stash_bytes);
  stats_.bubble_fraction = measure_bubble();
  stats_.last = result;
  return result;
}

double Trainer::clip_gradients() {
  const double max_norm = cfg_.optimizer.clip_grad_norm;
  if (max_norm <= 0.0) return 0.0;
  // Per-layer sums of squares in a vector indexed by global layer; each entry is non-zero on exactly one
  // pipeline rank, so the ordered sum over ranks is exact and the norm is independent of the partition.
  const int layers = parts_.num_layers;
  std::vector<double> per_layer(layers, 0.0);
  kernels::Backend& backend = *parts_.backend;
  for (auto& [index, stage] : parts_.stages) {
    for (model::Parameter* p : stage->parameters()) per_layer[p->layer_index] += backend.sum_of_squares(p->grad);
  }
  parts_.mpi->pipeline_group().ordered_sum(per_layer.data(), layers);
  double total = 0.0;
  for (double s : per_layer) total += s;
  const double norm = std::sqrt(total);
  if (norm > max_norm) {
    const float coefficient = static_cast<float>(max_norm / (norm + 1e-6));
    for (auto& [index, stage] : parts_.stages) {
      for (model::Parameter* p : stage->parameters()) backend.scale(coefficient, p->grad);
    }
  }
  return norm;
}

double Trainer::measure_bubble() {
  // Over the pipeline's span only, as the simulator defines it: the optimizer step after the drain is not
  // schedule idle time.
  const double mine[2] = {stats_.counters.busy_total(), stats_.counters.pipeline_seconds};
  std::vector<double> all = parts_.mpi->pipeline_group().all_gather(mine, 2);
  const int stages = layout().stages;
  double busy = 0.0, makespan = 0.0;
  for (int r = 0; r < stages; ++r) {
    busy += all[2 * r];
    makespan = std::max(makespan, all[2 * r + 1]);
  }
  return makespan > 0.0 ? 1.0 - busy / (stages * makespan) : 0.0;
}

}  // namespace sluice::runtime
