// One process's share of a pipelined, data-parallel training job, along its flow: start() makes the set-up
// (trainer_setup.h: layout, partition, built stage modules, schedule, transports, executors); the Trainer is then
// the step engine, running optimizer steps on those parts: executor -> data-parallel gradient sums (overlapping
// the drain) -> optional clipping by global norm -> optimizer, one accumulation window (accumulation_window.h) at a
// time. A checkpoint reads and restores the run's state through state()/restore() (trainer_state.h). All methods
// marked "collective" must be called by every rank of the world communicator in the same order.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/config/config.h"
#include "core/config/layout.h"
#include "core/runtime/accumulation_window.h"
#include "core/runtime/data_position.h"
#include "core/runtime/declared_domain.h"
#include "core/runtime/executor.h"
#include "core/runtime/normalization.h"
#include "core/runtime/sample_store.h"
#include "core/runtime/step_counters.h"
#include "core/runtime/trainer_setup.h"
#include "core/runtime/trainer_state.h"

namespace sluice::runtime {

// What one train_step call did. With optimizer.accumulate = K a call only adds to the gradient unless it is
// the K-th of its window.
struct StepResult {
  uint64_t step = 0;       // optimizer steps completed after this call (1-based: the step this call completed
                           // when `stepped`; otherwise the count so far, unchanged by the call)
  double loss = 0.0;       // mean loss over THIS CALL's samples (rows x replicas), identical on every rank
  double seconds = 0.0;    // wall time of the call on this rank
  double grad_norm = 0.0;  // global gradient norm before clipping (0 unless clipping is on and the call stepped)
  bool stepped = true;     // whether this call ended its window: data-parallel sum, clipping, optimizer step
  int pending_calls = 0;   // calls whose gradients are summed but not yet applied (0 when stepped; else 1..K-1)
};

// What the last train_step did and measured on this rank (run report, C API).
struct StepStats {
  StepResult last;                // the last call's result (loss, seconds, ...)
  StepCounters counters;          // its counters (busy time per action kind, stash, ...)
  size_t peak_stash_bytes = 0;    // largest peak stash (bytes) seen on this rank over all calls
  double bubble_fraction = 0.0;   // the last call's pipeline bubble (idle share of the pipeline's span)
};

// The name of the argument agreement each collective operation starts with (see Trainer::join_with_error).
inline std::string arguments_of(const std::string& function) { return function + " arguments"; }

class Trainer {
 public:
  // Parses nothing: takes a validated Config. `custom_layers` resolves `{type: custom, name: ...}`.
  Trainer(MPI_Comm world, config::Config cfg, model::CustomLayerRegistry custom_layers = {});
  ~Trainer();

  // Collective. Makes the set-up (trainer_setup.h: layout, partition, build and initialize parameters, schedule,
  // communicators, executors) and configures the run's state (normalization, submitted samples). `declared`: this
  // rank's block of a split field as the host declared it (sluice_trainer_set_domain); start gathers every rank's
  // with gather_declared_domain (declared_domain.h) into the layout the run trains on (docs/DOMAIN.md).
  void start(std::optional<DeclaredDomain> declared = std::nullopt);
  bool started() const { return started_; }

  // Collective. Forward and backward of this replica's `rows` samples (row-major [rows][features]); ranks
  // without the first stage may pass inputs == nullptr, ranks without the last stage targets == nullptr.
  // `rows` is the call's own: any rows >= pipeline.microbatches M, the same on every rank (agreed, else
  // kInvalidArgument on every rank), cut into M micro-batches by microbatch_rows.h (uneven when M does not divide
  // it). data.batch, when configured, is not consulted.
  //
  // Gradient accumulation (config optimizer.accumulate = K, default 1): calls come in windows of K. The first
  // call of a window zeroes the gradients, every call adds its micro-batches' gradients, and only the K-th
  // call runs the data-parallel sum, clipping and the optimizer step (StepResult::stepped). The loss gradient is
  // normalised by the window's global batch (rows x replicas x K), call k of the window uses global
  // micro-batch numbers replica*K*M + k*M + j (stash names), and dropout is keyed by the running sample count
  // (TrainerState::data_position, StepData::first_sample), so K calls of B rows give the same parameters,
  // bit for bit on CPU, as one call of K*B rows with K*M micro-batches and accumulate 1. Every call of a window
  // must pass the same `rows` (another is refused, kInvalidArgument naming both). steps_done() counts optimizer
  // steps, so a window's calls share one dropout step key.
  //
  // Failure: a call that fails on any rank throws on every rank (the step agreement) and DROPS THE WINDOW: the
  // gradients of its earlier calls are zeroed too and the next call starts a new window. No update is applied.
  //
  // Normalization (config `normalization`, normalization.h): the inputs are normalized before the first layer and
  // the targets before the loss, so StepResult::loss is in normalized target units. With `auto`, the first call
  // computes the statistics (collective, the same on every rank) from the first normalization.samples samples of
  // its global batch; they stay fixed from then on and are saved in checkpoints.
  StepResult train_step(const float* inputs, const float* targets, int64_t rows);

  // Collective. Pipelined forward only (dropout off); `outputs` ([rows][output_features]) is filled on
  // every rank of the replica. Any rows >= 1: the batch runs in the passes of prediction_passes.h (the rule the
  // inference-only model follows too), each a forward-only order of the training layout (trainer_predict.cc).
  //
  // Normalization (config `normalization`, normalization.h): inputs are normalized before the first layer and the
  // outputs de-normalized (y * std + mean) before they are returned. Error(kState) on every rank while an auto side
  // has no statistics yet (before the first training call).
  void predict(const float* inputs, float* outputs, int64_t rows);
  // Collective. As predict, but the outputs stay in the model's units (normalized targets): what the loss sees
  // (evaluation.cc).
  void predict_model_units(const float* inputs, float* outputs, int64_t rows);

  // Collective: stands in for this rank's call of `function` (e.g. "sluice_train_step") when the caller found
  // its arguments bad before reaching it (the Fortran wrappers check array extents). Joins the argument
  // agreement (arguments_of) the other ranks' calls start with, so every rank fails with `error`. Always throws.
  // Without a started trainer it throws `error` locally, as the other ranks' calls then fail locally too.
  [[noreturn]] void join_with_error(const std::string& function, const Error& error);

  const config::Config& config() const { return cfg_; }
  const config::Layout& layout() const { return parts_.layout; }
  // What start() made: stage modules, optimizer, schedule, communicators, backend, features, choices made.
  const RunParts& parts() const { return parts_; }
  // What the last train_step did and measured on this rank.
  const StepStats& stats() const { return stats_; }
  uint64_t steps_done() const { return step_; }

  // The run's state as a checkpoint saves it (TrainerState::samples left empty: read submitted_samples()).
  TrainerState state() const;
  // Local: replaces the run's state by a checkpoint's (every rank restores its own; the caller has agreed that
  // every rank read its state). A position of 0 starts a fresh window (the gradients are zeroed); a position > 0
  // continues the window whose partial sums the caller put into the parameters' grad tensors.
  void restore(TrainerState state);

  // The samples submitted through sluice_submit_samples that this rank holds (core/runtime/submitted_samples.h);
  // configured by start(), saved and loaded with every checkpoint (/samples).
  const SampleStore& submitted_samples() const { return submitted_samples_; }
  // Local (submitted_samples.cc calls these collectively): this rank's share of routed samples joins the store;
  // after a successful call on a drawn batch of `batch`, the store forgets or counts it.
  void append_samples(const float* inputs, const float* targets, int64_t count);
  void consume_samples(int64_t batch) { submitted_samples_.consume(batch); }

  // Learning rate (core/runtime/trainer_learning_rate.cc). The next optimizer step's lr: the override when one
  // is set, else optimizer.lr_schedule at the optimizer's step count.
  double next_learning_rate() const;
  // Collective (every rank must pass the same value: agreed, else kInvalidArgument on every rank). lr > 0
  // replaces the schedule from the next optimizer step on; 0 returns to the schedule (at its current position).
  // Saved in checkpoints (/train/lr_override_bits).
  void set_learning_rate(double lr);

  // Local, before start(): the function `loss: custom` computes (sluice_trainer_register_loss). start() refuses
  // loss: custom without one (kConfig, agreed), and a registered loss under another `loss`.
  void set_custom_loss(model::CustomLoss loss) { parts_.custom_loss = std::move(loss); }

  // Records each step's measured timeline (core/runtime/run_report.h: write_trace).
  void set_tracing(bool on) { tracing_ = on; }

 private:
  // Collective: every rank checks its own arguments, then all agree (and on equal batch sizes). With
  // `targets_everywhere`, `targets` (predict's outputs) must be non-NULL on every rank.
  // `any_batch`: any rows >= 1 (predict), else rows >= pipeline.microbatches.
  std::exception_ptr training_data_problem(const float* inputs, const float* targets, int64_t rows) const;
  void check_step_inputs(const char* function, const float* inputs, const float* targets, int64_t rows,
                         bool targets_everywhere, bool any_batch = false);
  // The executor's view of this call: its window's normalisation, micro-batch numbers and first sample.
  StepData training_step_data(const float* inputs, const float* targets, int64_t rows) const;
  // Collective: the executor's run of this call, then its numeric check (a NaN or Inf fails it).
  StepOutcome run_call(const StepData& data, std::chrono::steady_clock::time_point& t0);
  // Collective: agrees on the call's outcome; on failure drops the window's partial sums on every rank, throws.
  void agree_on_call(const StepOutcome& outcome, bool window_start);
  // Collective: the call's loss over the world, its time and the step statistics.
  StepResult finish_call(StepResult result, double loss_sum, int64_t rows, std::chrono::steady_clock::time_point t0);
  // On a domain split: the halo channel's and tile gather's totals so far (zeros without one); the call's share
  // goes into the step counters.
  struct DomainSent {
    int64_t halo_bytes = 0, halo_messages = 0, gather_bytes = 0;
  };
  DomainSent domain_sent() const;
  void count_domain_sent(const DomainSent& before);
  // Prediction (trainer_predict.cc): one forward-only pass of `microbatches` micro-batches into `outputs`.
  void predict_pass(const float* inputs, float* outputs, int64_t microbatch_rows, int microbatches);
  void start_reduction(int stage);
  void drop_domain_partials();  // collective over the domain group after a failed call
  double clip_gradients();
  double measure_bubble();
  // Normalization (trainer_normalization.cc). Collective: auto statistics from the first training call's samples.
  void compute_auto_normalization(const float* inputs, const float* targets, int64_t rows);
  // The caller's arrays normalized for this rank's stages: copies in `inputs`/`targets` when a side is normalized
  // (read where the first / last stage lives), else empty; in_ptr/target_ptr point at what the executor reads.
  struct NormalizedBatch {
    std::vector<float> inputs, targets;
    const float* in_ptr = nullptr;
    const float* target_ptr = nullptr;
  };
  NormalizedBatch normalized_batch(const float* inputs, const float* targets, int64_t rows) const;

  MPI_Comm world_in_;  // the host's: only duplicated (start), never sent on
  config::Config cfg_;
  bool started_ = false;
  RunParts parts_;  // the set-up: before everything the steps change (the executors' callbacks read them)
  // The step engine's state.
  uint64_t step_ = 0;
  AccumulationWindow window_;
  DataPosition data_position_;  // the samples trained on so far (TrainerState::data_position)
  bool reduce_this_call_ = true;  // the executor's stage-done callback starts data-parallel sums (window's end)
  StepStats stats_;
  bool tracing_ = false;
  SampleStore submitted_samples_;
  double lr_override_ = 0.0;  // sluice_set_learning_rate; 0: follow optimizer.lr_schedule
  Normalization normalization_;
};

}  // namespace sluice::runtime
