// One process's share of a pipelined, data-parallel training job. It turns a Config into a layout
// (stage rank, replica), builds this rank's stage modules from the partitioned layer list, generates and
// lowers the schedule, and runs optimizer steps: executor -> data-parallel gradient sums (overlapping the
// drain) -> optional clipping by global norm -> optimizer. All methods marked "collective" must be called
// by every rank of the world communicator in the same order.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/comm/duplicate_comm.h"
#include "core/comm/mpi_context.h"
#include "core/common/error.h"
#include "core/config/config.h"
#include "core/config/inter_node_traffic.h"
#include "core/config/layout.h"
#include "core/model/builder.h"
#include "core/model/loss.h"
#include "core/model/optimizer.h"
#include "core/model/stage_module.h"
#include "core/runtime/data_position.h"
#include "core/runtime/executor.h"
#include "core/runtime/gradient_reducer.h"
#include "core/runtime/normalization.h"
#include "core/runtime/pipeline_transport.h"
#include "core/runtime/sample_store.h"
#include "core/runtime/step_counters.h"
#include "core/schedule/schedule.h"

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

class Trainer {
 public:
  // Parses nothing: takes a validated Config. `custom_layers` resolves `{type: custom, name: ...}`.
  Trainer(MPI_Comm world, config::Config cfg, model::CustomLayerRegistry custom_layers = {});
  ~Trainer();

  // Collective. Layout, partition, build and initialize parameters, schedule, communicators.
  void start();
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
  // (data_position(), StepData::first_sample), so K calls of B rows give the same parameters,
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
  // agreement the other ranks' calls start with, so every rank fails with `error`. Always throws. Without a
  // started trainer it throws `error` locally, as the other ranks' calls then fail locally too.
  [[noreturn]] void join_with_error(const std::string& function, const Error& error);

  // The name of the argument agreement each collective operation starts with (see join_with_error).
  static std::string arguments_of(const std::string& function) { return function + " arguments"; }

  const config::Config& config() const { return cfg_; }
  const config::Layout& layout() const { return layout_; }
  // How pipeline.rank_order was resolved at start, with the inter-node bytes of each option (run report).
  const config::RankOrderChoice& rank_order_choice() const { return rank_order_; }
  // The threads this rank's cpu kernels run with (the BLAS setting), after config.cpu_threads was applied at start.
  int blas_threads() const { return blas_threads_; }
  // With pipeline.schedule auto: the candidate table the schedule was chosen from (run report); else empty.
  const std::string& schedule_choice_report() const { return schedule_choice_report_; }
  int64_t input_features() const { return input_features_; }
  int64_t output_features() const { return output_features_; }
  // One sample's shape at the model's input and output (config/sample_shape.h: {F} for rows, {C, D..} for a field).
  const std::vector<int64_t>& input_shape() const { return input_shape_; }
  const std::vector<int64_t>& output_shape() const { return output_shape_; }
  uint64_t steps_done() const { return step_; }
  void set_steps_done(uint64_t step) { step_ = step; }
  // Calls of the current accumulation window already done (0 at a step boundary, else 1..accumulate-1); the
  // partial sums are the parameters' grad tensors. Set by a checkpoint load together with those sums.
  int accumulation_position() const { return window_position_; }
  void set_accumulation_position(int position) {
    window_position_ = position;
    window_rows_ = 0;  // unknown after a restart: the window's next call sets it
  }
  // The samples (all replicas) trained on so far: the next call's first global sample index (data_position.h).
  // Saved in checkpoints as /train/data_position and restored by a load.
  const DataPosition& data_position() const { return data_position_; }
  void restore_data_position(uint64_t samples, bool known) { data_position_.restore(samples, known); }
  double last_loss() const { return last_.loss; }
  double last_step_seconds() const { return last_.seconds; }
  double last_bubble_fraction() const { return last_bubble_; }
  const StepCounters& last_counters() const { return counters_; }
  // Largest peak stash (bytes) seen on this rank over all steps.
  size_t peak_stash_bytes() const { return peak_stash_bytes_all_; }

  // The stage modules on this rank, by global stage index.
  const std::map<int, std::unique_ptr<model::StageModule>>& stages() const { return stages_; }
  model::Optimizer& optimizer() { return *optimizer_; }
  const schedule::Schedule& lowered_schedule() const { return lowered_; }
  comm::MpiContext& mpi() { return *mpi_; }
  kernels::Backend& backend() { return *backend_; }
  // The pipeline transport of this rank ("mpi", "staged", "nccl") and across the world ("mixed: ...").
  std::string transport_name() const { return config::transport_kind_name(pipeline_transport_.kind); }
  const std::string& transport_summary() const { return pipeline_transport_.summary; }
  // The data-parallel gradient sum in use, or "" with one replica.
  std::string gradient_sum_name() const;
  // The samples submitted through sluice_submit_samples that this rank holds (core/runtime/submitted_samples.h);
  // configured by start(), saved and loaded with every checkpoint (/samples).
  SampleStore& submitted_samples() { return submitted_samples_; }
  const SampleStore& submitted_samples() const { return submitted_samples_; }
  // Learning rate (core/runtime/trainer_learning_rate.cc). The next optimizer step's lr: the override when one
  // is set, else optimizer.lr_schedule at optimizer().step_count().
  double next_learning_rate() const;
  // Collective (every rank must pass the same value: agreed, else kInvalidArgument on every rank). lr > 0
  // replaces the schedule from the next optimizer step on; 0 returns to the schedule (at its current position).
  // Saved in checkpoints (/train/lr_override_bits).
  void set_learning_rate(double lr);
  // Local: the override (0: none), as checkpoints save and load it.
  double learning_rate_override() const { return lr_override_; }
  void restore_learning_rate_override(double lr) { lr_override_ = lr; }

  // Local, before start(): the function `loss: custom` computes (sluice_trainer_register_loss). start() refuses
  // loss: custom without one (kConfig, agreed), and a registered loss under another `loss`.
  void set_custom_loss(model::CustomLoss loss) { custom_loss_ = std::move(loss); }
  const model::CustomLoss& custom_loss() const { return custom_loss_; }
  // The custom layers the model was built with (core/runtime/layer_params.h sizes layers from them).
  const model::CustomLayerRegistry& custom_layers() const { return custom_layers_; }

  // The normalization statistics in use (configured at start; auto ones after the first training call; a
  // checkpoint load restores the saved ones through the mutable access).
  const Normalization& normalization() const { return normalization_; }
  Normalization& normalization() { return normalization_; }

  // Records each step's measured timeline (core/runtime/run_report.h: write_trace).
  void set_tracing(bool on) { tracing_ = on; }

 private:
  config::RankOrderChoice choose_rank_order(int world_size);
  void build_local_state();
  void build_executors();  // after the pipeline transport is agreed
  // Collective: every rank checks its own arguments, then all agree (and on equal batch sizes). With
  // `targets_everywhere`, `targets` (predict's outputs) must be non-NULL on every rank.
  // An accumulation window's calls must all pass the same batch (identical on every rank: no agreement needed).
  void check_window_batch(int64_t rows) const;
  // The executor's view of this call: its window's normalisation, micro-batch numbers and first sample.
  StepData training_step_data(const float* inputs, const float* targets, int64_t rows) const;
  // Collective: agrees on the call's outcome; on failure drops the window's partial sums on every rank, throws.
  void agree_on_call(const StepOutcome& outcome, bool window_start);
  // `any_batch`: any rows >= 1 (predict), else rows >= pipeline.microbatches.
  std::exception_ptr training_data_problem(const float* inputs, const float* targets, int64_t rows) const;
  void check_step_inputs(const char* function, const float* inputs, const float* targets, int64_t rows,
                         bool targets_everywhere, bool any_batch = false);
  // Prediction (trainer_predict.cc): the executor of a forward-only pass of `microbatches` micro-batches (built on
  // first use for fewer than pipeline.microbatches), and one pass into `outputs`.
  Executor& predictor_for(int microbatches);
  void predict_pass(const float* inputs, float* outputs, int64_t microbatch_rows, int microbatches);
  void build_gradient_reducer();  // after the pipeline transport (its choice follows the transport's)
  void start_reduction(int stage);
  void finish_reductions();
  double clip_gradients();
  double measure_bubble();
  void check_custom_loss() const;  // trainer_custom_loss.cc
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
  double loss_of(const kernels::Tensor& output, const float* targets, int64_t global_batch, kernels::Tensor& grad);

  MPI_Comm world_in_;  // the host's: only duplicated (start), never sent on
  std::unique_ptr<comm::DuplicateComm> world_;  // before mpi_: outlives every communicator made from it
  config::Config cfg_;
  model::CustomLayerRegistry custom_layers_;
  bool started_ = false;
  config::Layout layout_{};
  config::RankOrderChoice rank_order_{};
  int blas_threads_ = 1;
  std::string schedule_choice_report_;
  std::unique_ptr<comm::MpiContext> mpi_;
  PipelineTransport pipeline_transport_;  // after mpi_ (may use its transport), before the executors (use it)
  std::map<int, std::unique_ptr<model::StageModule>> stages_;
  std::unique_ptr<model::Optimizer> optimizer_;
  schedule::Schedule lowered_;
  std::unique_ptr<schedule::Schedule> forward_only_;
  std::unique_ptr<Executor> executor_;
  std::unique_ptr<Executor> predictor_;
  // Forward-only orders of fewer micro-batches (a prediction's remainder rows), by micro-batch count; each
  // executor keeps a reference to its schedule, so both live here together.
  std::map<int, std::pair<std::unique_ptr<schedule::Schedule>, std::unique_ptr<Executor>>> short_predictors_;
  int64_t input_features_ = 0;
  int64_t output_features_ = 0;
  std::vector<int64_t> input_shape_;
  std::vector<int64_t> output_shape_;
  int num_layers_ = 0;
  uint64_t step_ = 0;
  int window_position_ = 0;       // see accumulation_position()
  DataPosition data_position_;    // see data_position()
  int64_t window_rows_ = 0;       // rows of the current window's calls (every call passes the same); 0: unknown
  bool reduce_this_call_ = true;  // the executor's stage-done callback starts data-parallel sums (window's end)
  StepResult last_;
  StepCounters counters_;
  size_t peak_stash_bytes_all_ = 0;
  bool tracing_ = false;
  double last_bubble_ = 0.0;
  model::LossKind loss_kind_ = model::LossKind::kMse;
  kernels::Backend* backend_ = nullptr;  // the device of this rank's pipeline stage (config device)
  // This rank's place among its node's GPU-driving ranks (which GPU it drives); -1 when it drives none.
  int gpu_local_rank_ = -1;
  // The data-parallel gradient sum (config pipeline.gradient_sum, resolved); null with one replica.
  std::unique_ptr<GradientReducer> reducer_;
  SampleStore submitted_samples_;
  double lr_override_ = 0.0;  // sluice_set_learning_rate; 0: follow optimizer.lr_schedule
  model::CustomLoss custom_loss_;  // loss: custom
  Normalization normalization_;
};

}  // namespace sluice::runtime
