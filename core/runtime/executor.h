// Runs one rank's lowered action list (from core/schedule) for one optimizer step: the only code that sees
// both the schedule IR and a transport. It moves activations and their gradients between stages (through
// comm::Transport, or by hand-over when two consecutive stages live on this rank), calls the stage modules
// for F / B / I / W, computes the loss on the last stage, and measures what it did.
//
// Communication: receives are posted as soon as the executor is within a short look-ahead window of
// them (never later than their place in the list; exactly at it for transports that run transfers in posting
// order, e.g. NCCL) and waited for right before the compute that uses them; sends are started right after the
// data is produced and completed lazily.
//
// Skips (core/model/skip_routes.h): a routed skip tensor goes from its producer's stage to its reader's in its own
// message (SEND_SKIP/RECV_SKIP, and the gradient back with SEND_SKIP_GRAD/RECV_SKIP_GRAD, or by hand-over when both
// stages live on this rank). The stages between do not hold it (their layers carry only the skips they touch); the
// producer's output loses its columns before the activation message, the reader's input gets them from the route.
//
// Failure: if a stage throws (a failing user callback, say), the rank keeps walking its action list with
// zero-filled data so that every peer still gets the messages it waits for, and reports the first error at
// the end; the trainer then agrees on failure across ranks and discards the step. No rank hangs.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/comm/transport.h"
#include "core/model/skip_routes.h"
#include "core/model/stage_module.h"
#include "core/runtime/microbatch_rows.h"
#include "core/runtime/step_counters.h"
#include "core/schedule/schedule.h"
#include "kernels/backend.h"
#include "kernels/tensor.h"

namespace sluice::runtime {

// The data of one step for this replica: `rows` >= M samples, micro-batch m is microbatch_rows(rows, M, m)
// (microbatch_rows.h: floor(rows/M) + 1 rows for m < rows mod M, else floor(rows/M)).
struct StepData {
  const float* inputs = nullptr;   // [rows][input_features], needed where stage 0 lives
  const float* targets = nullptr;  // [rows][target_features], needed where the last stage lives
  int64_t rows = 0;
  int64_t input_features = 0;
  int64_t target_features = 0;
  int64_t global_batch = 0;  // all replicas (and all calls of an accumulation window) together: the loss
                             // gradient is that of a mean over this many samples
  uint64_t seed = 0;         // run seed: with the layer and the global sample index it keys the
  uint64_t step = 0;         // counter-based RNG (dropout masks); the optimizer step index
  bool training = true;
  // This replica's first global micro-batch number (replica * M; with gradient accumulation over K calls,
  // replica * K * M + call * M): stage modules name their stashes by it.
  int microbatch_offset = 0;
  // Global sample index of this replica's row 0 in this call: the sample's position in the stream of samples
  // since step 0, as `sluice train` and the API feed it. The stream is the running count of samples the run has
  // trained on (the trainer's data position, /train/data_position in checkpoints): a call of `rows` rows per
  // replica is a global batch of rows x replicas samples, ordered replica-major (replica r holds its rows
  // [r*rows, (r+1)*rows)), so
  //   first_sample = (samples of all earlier calls) + replica * rows
  // and row j of micro-batch m is sample first_sample + microbatch_rows(rows, M, m).first + j. With every call of
  // the same size (always under `sluice train`) the earlier calls' samples are (s*K + k) * rows * replicas for call
  // k of step s. Dropout masks are keyed by it (not by micro-batch), so replicas, stages, micro-batches and calls
  // change results only by summation order, and calls of different sizes never reuse an index.
  uint64_t first_sample = 0;
};

// Computes the loss of one micro-batch's output: returns the sum of its per-sample losses and fills
// `grad` with dLoss/dOutput already divided by the global batch.
using LossFn = std::function<double(const kernels::Tensor& output, const float* targets, int64_t global_batch,
                                    kernels::Tensor& grad)>;

struct StepOutcome {
  double loss_sum = 0.0;  // sum of per-sample losses of the micro-batches whose last stage is here
  std::exception_ptr error;  // first failure on this rank, if any
  // Forward outputs of the last stage, per micro-batch (only for forward-only runs).
  std::vector<kernels::Tensor> outputs;
};

class Executor {
 public:
  // `actions`: this rank's lowered list. `stages`: global stage index -> module, for the stages on this
  // rank. Message buffers and inputs are allocated through `backend`, so they live where the stages compute
  // (host memory for the CPU backend, device memory for a GPU backend). `on_stage_done(stage)`: called once per step right after the stage's last weight gradient, so
  // the data-parallel reduction of that stage can overlap the rest of the drain.
  // `progress()`, if set, runs after every action (a hook for work that must advance during the step).
  // Throws sluice::Error(kConfig) when the schedule needs message tags beyond transport.max_tag(). The bound
  // and the schedule's size are the same on every rank, so every rank refuses alike (Trainer::start relies on it).
  // `routes`: the model's routed skips; `lowered.skips` must list exactly their (from, to), in order (Error
  // kInternal otherwise).
  Executor(const schedule::Schedule& lowered, int rank, std::map<int, model::StageModule*> stages,
           kernels::Backend& backend, comm::Transport& transport, LossFn loss,
           std::function<void(int stage)> on_stage_done, std::function<void()> progress = {},
           model::SkipRoutes routes = {});

  StepOutcome run(const StepData& data, StepCounters& counters, bool trace);

  // The largest message tag a step of `lowered` uses (tags are unique per receiving stage, micro-batch and
  // direction; see tag(); skip messages per skip, micro-batch and direction after those, see skip_tag()).
  static int64_t largest_tag(const schedule::Schedule& lowered);

 private:
  using Clock = std::chrono::steady_clock;
  struct Key {
    int stage;
    int mb;
    bool operator<(const Key& o) const { return stage != o.stage ? stage < o.stage : mb < o.mb; }
  };
  struct Pending {
    kernels::Tensor buffer;
    std::unique_ptr<comm::Request> request;
  };
  // What the action methods of one step share.
  struct Step {
    const StepData& data;
    StepCounters& counters;
    StepOutcome& outcome;
    model::StepInfo info;
    Clock::time_point start;
  };

  using RouteKey = std::pair<int, int>;  // (route, micro-batch)

  void check_tag_bound() const;
  void check_routes() const;
  void begin_step(const StepData& data);

  // One method per action kind. Compute methods return when the compute itself started (after any wait for
  // its input), which is what the busy counters and the timeline measure from.
  void execute(const schedule::Action& a, Step& step, bool trace);
  Clock::time_point exec_forward(const schedule::Action& a, Step& step);
  Clock::time_point exec_backward(const schedule::Action& a, Step& step);        // B: input and weight gradient
  Clock::time_point exec_backward_input(const schedule::Action& a, Step& step);  // I: input gradient only
  Clock::time_point exec_backward_weight(const schedule::Action& a, Step& step);  // W
  void exec_send_forward(const schedule::Action& a);
  void exec_send_backward(const schedule::Action& a);
  void exec_receive(const schedule::Action& a);  // RECV_F, RECV_B, RECV_SKIP and RECV_SKIP_GRAD
  void exec_send_skip(const schedule::Action& a);  // SEND_SKIP and SEND_SKIP_GRAD

  // Routed skips (executor_skips.cc).
  int route_index(int from, int to) const;
  int skip_tag(int route, int mb, bool forward) const;
  void post_skip_receive(const schedule::Action& a);
  // The routed columns of boundary `boundary` in its sender's output (stage `boundary`) and in its receiver's input
  // (stage `boundary` + 1), empty when none (also for a boundary out of range).
  const std::vector<model::RoutedColumns>& sent(int boundary) const;
  const std::vector<model::RoutedColumns>& received(int boundary) const;
  // Forward: the routes leaving `stage` take their columns of its output; the routes reaching it fill its input.
  void produce_skips(int stage, int mb, const kernels::Tensor& output);
  void fill_skips(int stage, int mb, kernels::Tensor& input, StepCounters& counters);
  // Backward: the gradient of routes leaving `stage` fills its output gradient; the routes reaching it take their
  // columns of its input gradient back.
  void fill_skip_gradients(int stage, int mb, kernels::Tensor& grad_output, StepCounters& counters);
  void produce_skip_gradients(int stage, int mb, const kernels::Tensor& grad_input);
  kernels::Tensor take_skip(int route, int mb, bool forward, StepCounters& counters);

  // Pieces the action methods share.
  kernels::Tensor forward_input(const schedule::Action& a, Step& step);
  void finish_last_stage(const schedule::Action& a, kernels::Tensor output, Step& step);
  Clock::time_point exec_input_gradient(const schedule::Action& a, Step& step);
  void route(kernels::Tensor tensor, const schedule::Action& producer, int consumer_stage,
             const std::vector<model::RoutedColumns>& held, std::map<Key, kernels::Tensor>& local,
             std::map<Key, kernels::Tensor>& outbox);
  void weight_gradient_done(int stage);
  void record_compute(const schedule::Action& a, Clock::time_point c0, Step& step, bool trace) const;
  void discard_failed_step(const StepData& data);

  void post_receives_ahead(size_t position);
  void post_receive(const schedule::Action& a);
  // A tensor handed over or received (without any routed columns) gets back the routed columns `held` of the
  // receiving side, as zeros (a route fills them), for a tensor of `width` columns.
  kernels::Tensor take_received(std::map<Key, Pending>& pending, std::map<Key, kernels::Tensor>& local, Key key,
                                const char* what, StepCounters& counters,
                                const std::vector<model::RoutedColumns>& held, int64_t width);
  kernels::Tensor take_wire(std::map<Key, Pending>& pending, std::map<Key, kernels::Tensor>& local, Key key,
                            const char* what, StepCounters& counters);
  kernels::Tensor wait_for(Pending& pending, const std::string& what, StepCounters& counters);
  void send_produced(std::map<Key, kernels::Tensor>& outbox, const schedule::Action& a, int peer_stage, bool forward,
                     const char* missing);
  void reap_sends(bool wait_all);
  int tag(int stage, int mb, bool forward) const;
  kernels::Tensor input_slice(const StepData& data, int mb) const;
  MicrobatchRows rows_of(int mb) const;  // micro-batch mb's rows in this step's batch
  void track_stash(StepCounters& counters) const;

  const schedule::Schedule& schedule_;
  const std::vector<schedule::Action>& actions_;
  int rank_;
  int last_stage_;
  int microbatches_;
  std::map<int, model::StageModule*> stages_;
  kernels::Backend& backend_;
  comm::Transport& transport_;
  LossFn loss_;
  std::function<void(int)> on_stage_done_;
  std::function<void()> progress_;
  model::SkipRoutes routes_;

  // Per-step state.
  size_t posted_upto_ = 0;
  int64_t rows_ = 0;  // this step's batch (StepData::rows)
  std::map<Key, Pending> recv_forward_;   // stage input on its way
  std::map<Key, Pending> recv_backward_;  // gradient of stage output on its way
  std::map<Key, kernels::Tensor> local_inputs_;  // handed over from the previous stage on this rank
  std::map<Key, kernels::Tensor> local_grads_;   // from the loss or the next stage on this rank
  std::map<Key, kernels::Tensor> to_send_forward_;
  std::map<Key, kernels::Tensor> to_send_backward_;
  std::map<RouteKey, Pending> recv_skip_;       // routed skip tensors on their way (forward)
  std::map<RouteKey, Pending> recv_skip_grad_;  // their gradients on their way (backward)
  std::map<RouteKey, kernels::Tensor> skip_out_;       // made here: to send, or for a reader on this rank
  std::map<RouteKey, kernels::Tensor> skip_grad_out_;  // the same for gradients
  std::vector<Pending> sends_;
  std::map<int, int> weight_done_;  // stage -> micro-batches whose weight gradients are done
};

}  // namespace sluice::runtime
