#include "core/runtime/executor.h"

#include <algorithm>
#include <string>
#include <utility>

#include "core/common/error.h"
#include "core/runtime/microbatch_rows.h"
#include "core/runtime/skip_columns.h"

namespace sluice::runtime {
namespace {

using schedule::Action;
using schedule::ActionKind;
using Clock = std::chrono::steady_clock;

// How many compute actions ahead receives are posted. Posting further ahead only costs buffer memory.
constexpr int kReceiveLookahead = 2;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void add_busy(StepCounters& counters, ComputeKind kind, Clock::time_point c0) {
  counters.busy_seconds[static_cast<int>(kind)] += seconds_since(c0);
}

bool is_receive(ActionKind kind) {
  return kind == ActionKind::RECV_F || kind == ActionKind::RECV_B || kind == ActionKind::RECV_SKIP ||
         kind == ActionKind::RECV_SKIP_GRAD;
}

// Unique per (receiving stage, micro-batch, direction) within a step; steps never overlap.
int64_t message_tag(int stages, int stage, int mb, bool forward) {
  return ((static_cast<int64_t>(mb) * stages + stage) << 1) | (forward ? 0 : 1);
}

// The after-first-error rule. Once something on this rank has failed in a step, compute is skipped (callers
// substitute zeros) while every message is still sent and received, so no peer waits forever; only the first
// error is kept, since later ones are mostly its consequences. Returns whether `work` ran and succeeded.
template <typename Work>
bool attempt(std::exception_ptr& first_error, Work&& work) {
  if (first_error) return false;
  try {
    work();
    return true;
  } catch (...) {
    first_error = std::current_exception();
    return false;
  }
}

}  // namespace

Executor::Executor(const schedule::Schedule& lowered, int rank, std::map<int, model::StageModule*> stages,
                   kernels::Backend& backend, comm::Transport& transport, LossFn loss,
                   std::function<void(int)> on_stage_done, std::function<void()> progress,
                   model::SkipRoutes routes)
    : schedule_(lowered),
      actions_(lowered.actions.at(rank)),
      rank_(rank),
      last_stage_(lowered.num_stages() - 1),
      microbatches_(lowered.microbatches),
      stages_(std::move(stages)),
      backend_(backend),
      transport_(transport),
      loss_(std::move(loss)),
      on_stage_done_(std::move(on_stage_done)),
      progress_(std::move(progress)),
      routes_(std::move(routes)) {
  check_tag_bound();
  check_routes();
  for (const Action& a : actions_) {
    if (schedule_.stage_to_rank.at(a.stage) != rank_) {
      throw Error(ErrorCode::kInternal, "rank " + std::to_string(rank_) + "'s schedule names stage " +
                                            std::to_string(a.stage) + ", which lives on another rank");
    }
    if (stages_.count(a.stage) == 0) {
      throw Error(ErrorCode::kInternal, "rank " + std::to_string(rank_) + " has no module for stage " +
                                            std::to_string(a.stage));
    }
  }
}

int64_t Executor::largest_tag(const schedule::Schedule& lowered) {
  const int stages = lowered.num_stages();
  const int64_t chain = message_tag(stages, stages - 1, lowered.microbatches - 1, false);
  const int64_t skips = static_cast<int64_t>(lowered.skips.size());
  return skips == 0 ? chain : chain + 1 + ((static_cast<int64_t>(lowered.microbatches) * skips - 1) << 1 | 1);
}

int Executor::skip_tag(int route, int mb, bool forward) const {
  const int stages = schedule_.num_stages();
  const int64_t chain = message_tag(stages, stages - 1, microbatches_ - 1, false);
  const int64_t skips = static_cast<int64_t>(schedule_.skips.size());
  // Fits an int: the constructor checked largest_tag() against transport_.max_tag().
  return static_cast<int>(chain + 1 + ((static_cast<int64_t>(mb) * skips + route) << 1 | (forward ? 0 : 1)));
}

// MPI only promises tags up to 32767 (MPI_TAG_UB may allow more), and a schedule's tags grow with
// micro-batches x stages: refuse a schedule whose tags the transport cannot carry rather than fail mid-step.
void Executor::check_tag_bound() const {
  const int64_t largest = largest_tag(schedule_);
  const int bound = transport_.max_tag();
  if (largest <= bound) return;
  throw Error(ErrorCode::kConfig, "pipeline.microbatches (" + std::to_string(schedule_.microbatches) + ") x " +
                                      std::to_string(schedule_.num_stages()) + " stages needs message tags up to " +
                                      std::to_string(largest) + " but this MPI allows only " + std::to_string(bound) +
                                      "; use fewer micro-batches or chunks");
}

MicrobatchRows Executor::rows_of(int mb) const { return microbatch_rows(rows_, microbatches_, mb); }

int Executor::tag(int stage, int mb, bool forward) const {
  // Fits an int: the constructor checked every tag against transport_.max_tag().
  return static_cast<int>(message_tag(schedule_.num_stages(), stage, mb, forward));
}

kernels::Tensor Executor::input_slice(const StepData& data, int mb) const {
  if (data.inputs == nullptr) {
    throw Error(ErrorCode::kInvalidArgument, "rank " + std::to_string(rank_) +
                                                 " holds the first stage but was given no inputs");
  }
  const MicrobatchRows part = rows_of(mb);
  return backend_.from_host(part.count, data.input_features, data.inputs + part.first * data.input_features);
}

// ---- Messages -----------------------------------------------------------------------------------------------

void Executor::post_receive(const Action& a) {
  if (schedule::is_skip_message(a.kind)) return post_skip_receive(a);
  const bool forward = a.kind == ActionKind::RECV_F;
  auto& pending = forward ? recv_forward_ : recv_backward_;
  Key key{a.stage, a.microbatch};
  if (pending.count(key)) return;  // already posted by the look-ahead
  model::StageModule* stage = stages_.at(a.stage);
  const int64_t cols = forward ? wire_width(received(a.stage - 1), stage->in_features())
                               : wire_width(sent(a.stage), stage->out_features());
  const int peer_stage = forward ? a.stage - 1 : a.stage + 1;
  Pending p;
  p.buffer = backend_.empty(rows_of(a.microbatch).count, cols);
  p.request = transport_.irecv(p.buffer.data(), p.buffer.size(), schedule_.stage_to_rank.at(peer_stage),
                               tag(a.stage, a.microbatch, forward));
  pending.emplace(key, std::move(p));
}

void Executor::post_receives_ahead(size_t position) {
  if (!transport_.receives_may_be_posted_early()) return;  // exec_receive posts each at its own place
  int computes = 0;
  size_t i = std::max(position, posted_upto_);
  for (; i < actions_.size(); ++i) {
    const Action& a = actions_[i];
    if (schedule::is_compute(a.kind) && i > position && ++computes > kReceiveLookahead) break;
    if (is_receive(a.kind)) post_receive(a);
  }
  posted_upto_ = std::max(posted_upto_, i);
}

kernels::Tensor Executor::take_received(std::map<Key, Pending>& pending, std::map<Key, kernels::Tensor>& local,
                                        Key key, const char* what, StepCounters& counters,
                                        const std::vector<model::RoutedColumns>& held, int64_t width) {
  kernels::Tensor t = take_wire(pending, local, key, what, counters);
  return held.empty() ? t : restore_routed(backend_, t, held, width);
}

kernels::Tensor Executor::take_wire(std::map<Key, Pending>& pending, std::map<Key, kernels::Tensor>& local, Key key,
                                    const char* what, StepCounters& counters) {
  auto l = local.find(key);
  if (l != local.end()) {
    kernels::Tensor t = std::move(l->second);
    local.erase(l);
    return t;
  }
  auto p = pending.find(key);
  if (p == pending.end()) {
    throw Error(ErrorCode::kInternal, "rank " + std::to_string(rank_) + ": no " + what + " for stage " +
                                          std::to_string(key.stage) + " micro-batch " + std::to_string(key.mb) +
                                          " (the schedule lacks its receive)");
  }
  kernels::Tensor t = wait_for(p->second, std::string(what) + " for stage " + std::to_string(key.stage) +
                                              " micro-batch " + std::to_string(key.mb), counters);
  pending.erase(p);
  return t;
}

kernels::Tensor Executor::wait_for(Pending& pending, const std::string& what, StepCounters& counters) {
  const auto t0 = Clock::now();
  try {
    pending.request->wait();
  } catch (const Error& e) {
    // The transport names the peer; only the executor knows what the message carries.
    if (e.code() != ErrorCode::kTimeout) throw;
    throw Error(ErrorCode::kTimeout, what + ": " + e.what());
  }
  counters.wait_seconds += seconds_since(t0);
  return std::move(pending.buffer);
}

// Hands a tensor that `producer` made to the stage that consumes it: directly when that stage lives on this
// rank (no message is scheduled then), else into `outbox`, keyed by the producer as its SEND names it. Either way
// without the `held` routed columns, which the producer's side has and the consumer's does not (their routes carry
// them): the consumer's side puts back its own (take_received).
void Executor::route(kernels::Tensor tensor, const Action& producer, int consumer_stage,
                     const std::vector<model::RoutedColumns>& held, std::map<Key, kernels::Tensor>& local,
                     std::map<Key, kernels::Tensor>& outbox) {
  if (!held.empty()) tensor = drop_routed(backend_, tensor, held);
  if (schedule_.stage_to_rank.at(consumer_stage) == rank_) {
    local[Key{consumer_stage, producer.microbatch}] = std::move(tensor);
  } else {
    outbox[Key{producer.stage, producer.microbatch}] = std::move(tensor);
  }
}

void Executor::send_produced(std::map<Key, kernels::Tensor>& outbox, const Action& a, int peer_stage, bool forward,
                             const char* missing) {
  auto it = outbox.find(Key{a.stage, a.microbatch});
  if (it == outbox.end()) throw Error(ErrorCode::kInternal, missing);
  Pending p;
  p.buffer = std::move(it->second);
  outbox.erase(it);
  // Tagged by the receiving stage, as its receive is.
  p.request = transport_.isend(p.buffer.data(), p.buffer.size(), schedule_.stage_to_rank.at(peer_stage),
                               tag(peer_stage, a.microbatch, forward));
  sends_.push_back(std::move(p));
}

void Executor::reap_sends(bool wait_all) {
  size_t kept = 0;
  for (size_t i = 0; i < sends_.size(); ++i) {
    if (wait_all) {
      sends_[i].request->wait();
    } else if (!sends_[i].request->test()) {
      if (kept != i) sends_[kept] = std::move(sends_[i]);
      ++kept;
      continue;
    }
  }
  sends_.resize(wait_all ? 0 : kept);
}

void Executor::exec_send_forward(const Action& a) {
  send_produced(to_send_forward_, a, a.stage + 1, true, "SEND_F before its forward");
}

void Executor::exec_send_backward(const Action& a) {
  send_produced(to_send_backward_, a, a.stage - 1, false, "SEND_B before its backward");
}

// A receive is posted no later than its place in the list and waited for by the compute that uses it. Where
// the transport allows, the look-ahead has posted it already; otherwise it is posted exactly here, so that
// transfers start in schedule order.
void Executor::exec_receive(const Action& a) {
  if (!transport_.receives_may_be_posted_early()) post_receive(a);
}

// ---- Compute ------------------------------------------------------------------------------------------------

kernels::Tensor Executor::forward_input(const Action& a, Step& step) {
  if (a.stage == 0) return input_slice(step.data, a.microbatch);
  kernels::Tensor input = take_received(recv_forward_, local_inputs_, Key{a.stage, a.microbatch}, "input",
                                        step.counters, received(a.stage - 1), stages_.at(a.stage)->in_features());
  fill_skips(a.stage, a.microbatch, input, step.counters);
  return input;
}

// The last stage's output is the step's result (forward-only) or goes into the loss, whose gradient starts
// the backward of the same micro-batch on this rank.
void Executor::finish_last_stage(const Action& a, kernels::Tensor output, Step& step) {
  if (!step.data.training) {
    step.outcome.outputs[a.microbatch] = std::move(output);
    return;
  }
  // Targets are checked (and agreed on) by the trainer before the step starts.
  const float* targets = step.data.targets + rows_of(a.microbatch).first * step.data.target_features;
  kernels::Tensor grad;
  const bool ok = attempt(step.outcome.error, [&] {
    grad = backend_.zeros(output.rows(), output.cols());
    step.outcome.loss_sum += loss_(output, targets, step.data.global_batch, grad);
  });
  if (!ok) grad = backend_.zeros(output.rows(), output.cols());
  local_grads_[Key{a.stage, a.microbatch}] = std::move(grad);
}

Executor::Clock::time_point Executor::exec_forward(const Action& a, Step& step) {
  model::StageModule* stage = stages_.at(a.stage);
  kernels::Tensor input = forward_input(a, step);
  const Clock::time_point c0 = Clock::now();
  const int mb = step.data.microbatch_offset + a.microbatch;
  kernels::Tensor output;
  const bool ok = attempt(step.outcome.error, [&] {
    model::StepInfo info = step.info;  // this micro-batch's rows in the sample stream key its dropout masks
    info.first_sample = step.data.first_sample + static_cast<uint64_t>(rows_of(a.microbatch).first);
    output = stage->forward(mb, std::move(input), info);
    if (!step.data.training) stage->discard(mb);  // no backward will want what forward kept
  });
  if (!ok) output = backend_.zeros(rows_of(a.microbatch).count, stage->out_features());
  produce_skips(a.stage, a.microbatch, output);
  if (a.stage == last_stage_) {
    finish_last_stage(a, std::move(output), step);
  } else {
    route(std::move(output), a, a.stage + 1, sent(a.stage), local_inputs_, to_send_forward_);
  }
  add_busy(step.counters, ComputeKind::kF, c0);
  return c0;
}

// B and I: the gradient of the stage input, which the previous stage's backward waits for.
Executor::Clock::time_point Executor::exec_input_gradient(const Action& a, Step& step) {
  model::StageModule* stage = stages_.at(a.stage);
  kernels::Tensor grad_out = take_received(recv_backward_, local_grads_, Key{a.stage, a.microbatch},
                                           "output gradient", step.counters, sent(a.stage), stage->out_features());
  fill_skip_gradients(a.stage, a.microbatch, grad_out, step.counters);
  const Clock::time_point c0 = Clock::now();
  const int mb = step.data.microbatch_offset + a.microbatch;
  const bool fused = a.kind == ActionKind::B;
  kernels::Tensor grad_in;
  const bool ok = attempt(step.outcome.error, [&] {
    grad_in = fused ? stage->backward(mb, std::move(grad_out)) : stage->backward_input(mb, std::move(grad_out));
  });
  // Stage 0 holds the model's first layer: its input gradient is not computed (StageModule returns an empty
  // tensor) and goes nowhere.
  if (a.stage > 0) {
    if (!ok) grad_in = backend_.zeros(rows_of(a.microbatch).count, stage->in_features());
    produce_skip_gradients(a.stage, a.microbatch, grad_in);
    route(std::move(grad_in), a, a.stage - 1, received(a.stage - 1), local_grads_, to_send_backward_);
  }
  add_busy(step.counters, fused ? ComputeKind::kB : ComputeKind::kI, c0);
  return c0;
}

Executor::Clock::time_point Executor::exec_backward(const Action& a, Step& step) {
  const Clock::time_point c0 = exec_input_gradient(a, step);
  weight_gradient_done(a.stage);  // B computes the weight gradient too
  return c0;
}

Executor::Clock::time_point Executor::exec_backward_input(const Action& a, Step& step) {
  return exec_input_gradient(a, step);
}

Executor::Clock::time_point Executor::exec_backward_weight(const Action& a, Step& step) {
  model::StageModule* stage = stages_.at(a.stage);
  const Clock::time_point c0 = Clock::now();
  attempt(step.outcome.error, [&] { stage->backward_weight(step.data.microbatch_offset + a.microbatch); });
  add_busy(step.counters, ComputeKind::kW, c0);
  weight_gradient_done(a.stage);
  return c0;
}

void Executor::weight_gradient_done(int stage) {
  if (++weight_done_[stage] == microbatches_) on_stage_done_(stage);
}

// ---- The step -----------------------------------------------------------------------------------------------

void Executor::track_stash(StepCounters& counters) const {
  int microbatches = 0;
  size_t bytes = 0;
  for (const auto& [index, stage] : stages_) {
    microbatches += stage->stashed_microbatches();
    bytes += stage->stashed_bytes();
  }
  counters.peak_stash_microbatches = std::max(counters.peak_stash_microbatches, microbatches);
  counters.peak_stash_bytes = std::max(counters.peak_stash_bytes, bytes);
}

void Executor::record_compute(const Action& a, Clock::time_point c0, Step& step, bool trace) const {
  track_stash(step.counters);
  if (!trace) return;
  step.counters.timeline.push_back({schedule::to_string(a),
                                    std::chrono::duration<double, std::micro>(c0 - step.start).count(),
                                    std::chrono::duration<double, std::micro>(Clock::now() - c0).count()});
}

void Executor::execute(const Action& a, Step& step, bool trace) {
  Clock::time_point c0;
  switch (a.kind) {
    case ActionKind::F: c0 = exec_forward(a, step); break;
    case ActionKind::B: c0 = exec_backward(a, step); break;
    case ActionKind::I: c0 = exec_backward_input(a, step); break;
    case ActionKind::W: c0 = exec_backward_weight(a, step); break;
    case ActionKind::SEND_F: return exec_send_forward(a);
    case ActionKind::SEND_B: return exec_send_backward(a);
    case ActionKind::RECV_F:
    case ActionKind::RECV_B:
    case ActionKind::RECV_SKIP:
    case ActionKind::RECV_SKIP_GRAD: return exec_receive(a);
    case ActionKind::SEND_SKIP:
    case ActionKind::SEND_SKIP_GRAD: return exec_send_skip(a);
  }
  record_compute(a, c0, step, trace);
}

void Executor::begin_step(const StepData& data) {
  if (data.rows < microbatches_) {
    throw Error(ErrorCode::kInvalidArgument, "batch of " + std::to_string(data.rows) + " rows is smaller than the " +
                                                 std::to_string(microbatches_) + " micro-batches it must fill");
  }
  rows_ = data.rows;
  posted_upto_ = 0;
  weight_done_.clear();
}

// Drops what a failed step left stashed so the next step starts clean.
void Executor::discard_failed_step(const StepData& data) {
  for (auto& [index, stage] : stages_) {
    for (int m = 0; m < microbatches_; ++m) {
      try {
        stage->discard(data.microbatch_offset + m);
      } catch (const Error&) {
        // not stashed: nothing to drop
      }
    }
  }
}

StepOutcome Executor::run(const StepData& data, StepCounters& counters, bool trace) {
  begin_step(data);
  StepOutcome outcome;
  if (!data.training) outcome.outputs.resize(microbatches_);
  Step step{data, counters, outcome, model::StepInfo{data.seed, data.step, data.training}, Clock::now()};
  counters.start_steady_us = std::chrono::duration<double, std::micro>(step.start.time_since_epoch()).count();
  for (size_t i = 0; i < actions_.size(); ++i) {
    post_receives_ahead(i);
    execute(actions_[i], step, trace);
    reap_sends(false);
    if (progress_) progress_();
  }
  reap_sends(true);
  if (outcome.error) discard_failed_step(data);
  local_inputs_.clear();
  local_grads_.clear();
  skip_out_.clear();  // a forward-only step leaves the gradients' routes unused
  skip_grad_out_.clear();
  counters.pipeline_seconds = seconds_since(step.start);
  return outcome;
}

}  // namespace sluice::runtime
