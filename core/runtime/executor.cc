#include "core/runtime/executor.h"

#include <chrono>
#include <string>
#include <utility>

#include "core/common/error.h"

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

}  // namespace

Executor::Executor(const schedule::Schedule& lowered, int rank, std::map<int, model::StageModule*> stages,
                   kernels::Backend& backend, comm::Transport& transport, LossFn loss,
                   std::function<void(int)> on_stage_done, std::function<void()> progress)
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
      progress_(std::move(progress)) {
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

int Executor::tag(int stage, int mb, bool forward) const {
  // Unique per (receiving stage, micro-batch, direction) within a step; steps never overlap.
  return ((mb * schedule_.num_stages() + stage) << 1) | (forward ? 0 : 1);
}

kernels::Tensor Executor::input_slice(const StepData& data, int mb) const {
  if (data.inputs == nullptr) {
    throw Error(ErrorCode::kInvalidArgument, "rank " + std::to_string(rank_) +
                                                 " holds the first stage but was given no inputs");
  }
  return backend_.from_host(mb_rows_, data.input_features, data.inputs + mb * mb_rows_ * data.input_features);
}

void Executor::post_receive(const Action& a) {
  const bool forward = a.kind == ActionKind::RECV_F;
  auto& pending = forward ? recv_forward_ : recv_backward_;
  Key key{a.stage, a.microbatch};
  if (pending.count(key)) return;  // already posted by the look-ahead
  model::StageModule* stage = stages_.at(a.stage);
  const int64_t cols = forward ? stage->in_features() : stage->out_features();
  const int peer_stage = forward ? a.stage - 1 : a.stage + 1;
  Pending p;
  p.buffer = backend_.empty(mb_rows_, cols);
  p.request = transport_.irecv(p.buffer.data(), p.buffer.size(), schedule_.stage_to_rank.at(peer_stage),
                               tag(a.stage, a.microbatch, forward));
  pending.emplace(key, std::move(p));
}

void Executor::post_receives_ahead(size_t position) {
  if (!transport_.receives_may_be_posted_early()) {
    const Action& a = actions_[position];
    if (a.kind == ActionKind::RECV_F || a.kind == ActionKind::RECV_B) post_receive(a);  // at its own place
    return;
  }
  int computes = 0;
  size_t i = std::max(position, posted_upto_);
  for (; i < actions_.size(); ++i) {
    const Action& a = actions_[i];
    if (schedule::is_compute(a.kind) && i > position && ++computes > kReceiveLookahead) break;
    if (a.kind == ActionKind::RECV_F || a.kind == ActionKind::RECV_B) post_receive(a);
  }
  posted_upto_ = std::max(posted_upto_, i);
}

kernels::Tensor Executor::take_received(std::map<Key, Pending>& pending, std::map<Key, kernels::Tensor>& local,
                                        Key key, const char* what, StepCounters& counters) {
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
  const auto t0 = Clock::now();
  p->second.request->wait();
  counters.wait_seconds += seconds_since(t0);
  kernels::Tensor t = std::move(p->second.buffer);
  pending.erase(p);
  return t;
}

void Executor::send(kernels::Tensor tensor, int peer_stage, int tag_stage, int mb, bool forward) {
  Pending p;
  p.buffer = std::move(tensor);
  p.request = transport_.isend(p.buffer.data(), p.buffer.size(), schedule_.stage_to_rank.at(peer_stage),
                               tag(tag_stage, mb, forward));
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

StepOutcome Executor::run(const StepData& data, StepCounters& counters, bool trace) {
  if (data.rows % microbatches_ != 0) {
    throw Error(ErrorCode::kInvalidArgument, "batch of " + std::to_string(data.rows) +
                                                 " rows does not split into " + std::to_string(microbatches_) +
                                                 " equal micro-batches");
  }
  mb_rows_ = data.rows / microbatches_;
  posted_upto_ = 0;
  weight_done_.clear();
  StepOutcome outcome;
  if (!data.training) outcome.outputs.resize(microbatches_);
  const auto step_start = Clock::now();
  model::StepInfo info{data.seed, data.step, data.training};

  for (size_t i = 0; i < actions_.size(); ++i) {
    const Action& a = actions_[i];
    post_receives_ahead(i);
    const Key key{a.stage, a.microbatch};
    model::StageModule* stage = stages_.at(a.stage);
    // Start of the compute itself (after any receive wait): what the busy counters and the timeline show.
    Clock::time_point c0 = Clock::now();
    bool computed = false;

    switch (a.kind) {
      case ActionKind::RECV_F:
      case ActionKind::RECV_B:
        break;  // posted by the look-ahead; waited for where it is used
      case ActionKind::SEND_F: {
        auto it = to_send_forward_.find(key);
        if (it == to_send_forward_.end()) throw Error(ErrorCode::kInternal, "SEND_F before its forward");
        send(std::move(it->second), a.stage + 1, a.stage + 1, a.microbatch, true);
        to_send_forward_.erase(it);
        break;
      }
      case ActionKind::SEND_B: {
        auto it = to_send_backward_.find(key);
        if (it == to_send_backward_.end()) throw Error(ErrorCode::kInternal, "SEND_B before its backward");
        send(std::move(it->second), a.stage - 1, a.stage - 1, a.microbatch, false);
        to_send_backward_.erase(it);
        break;
      }
      case ActionKind::F: {
        kernels::Tensor input = a.stage == 0
                                    ? input_slice(data, a.microbatch)
                                    : take_received(recv_forward_, local_inputs_, key, "input", counters);
        c0 = Clock::now();
        kernels::Tensor output;
        if (outcome.error) {
          output = backend_.zeros(mb_rows_, stage->out_features());
        } else {
          try {
            output = stage->forward(data.microbatch_offset + a.microbatch, std::move(input), info);
            if (!data.training) stage->discard(data.microbatch_offset + a.microbatch);
          } catch (...) {
            outcome.error = std::current_exception();
            output = backend_.zeros(mb_rows_, stage->out_features());
          }
        }
        if (a.stage == last_stage_) {
          if (!data.training) {
            outcome.outputs[a.microbatch] = std::move(output);
          } else {
            // Targets are checked (and agreed on) by the trainer before the step starts.
            kernels::Tensor grad = backend_.zeros(output.rows(), output.cols());
            if (!outcome.error) {
              try {
                outcome.loss_sum += loss_(output, data.targets + a.microbatch * mb_rows_ * data.target_features,
                                          data.global_batch, grad);
              } catch (...) {
                outcome.error = std::current_exception();
                grad = backend_.zeros(output.rows(), output.cols());
              }
            }
            local_grads_[key] = std::move(grad);
          }
        } else if (schedule_.stage_to_rank.at(a.stage + 1) == rank_) {
          local_inputs_[Key{a.stage + 1, a.microbatch}] = std::move(output);
        } else {
          to_send_forward_[key] = std::move(output);
        }
        counters.busy_seconds[static_cast<int>(ComputeKind::kF)] += seconds_since(c0);
        computed = true;
        break;
      }
      case ActionKind::B:
      case ActionKind::I: {
        kernels::Tensor grad_out = take_received(recv_backward_, local_grads_, key, "output gradient", counters);
        c0 = Clock::now();
        kernels::Tensor grad_in;
        if (!outcome.error) {
          try {
            const int mb = data.microbatch_offset + a.microbatch;
            grad_in = a.kind == ActionKind::B ? stage->backward(mb, std::move(grad_out))
                                              : stage->backward_input(mb, std::move(grad_out));
          } catch (...) {
            outcome.error = std::current_exception();
          }
        }
        // Stage 0 holds the model's first layer: its input gradient is not computed (StageModule returns an empty
        // tensor) and goes nowhere.
        if (a.stage > 0) {
          if (outcome.error) grad_in = backend_.zeros(mb_rows_, stage->in_features());
          if (schedule_.stage_to_rank.at(a.stage - 1) == rank_) {
            local_grads_[Key{a.stage - 1, a.microbatch}] = std::move(grad_in);
          } else {
            to_send_backward_[key] = std::move(grad_in);
          }
        }
        const ComputeKind kind = a.kind == ActionKind::B ? ComputeKind::kB : ComputeKind::kI;
        counters.busy_seconds[static_cast<int>(kind)] += seconds_since(c0);
        if (a.kind == ActionKind::B && ++weight_done_[a.stage] == microbatches_) on_stage_done_(a.stage);
        computed = true;
        break;
      }
      case ActionKind::W: {
        c0 = Clock::now();
        if (!outcome.error) {
          try {
            stage->backward_weight(data.microbatch_offset + a.microbatch);
          } catch (...) {
            outcome.error = std::current_exception();
          }
        }
        counters.busy_seconds[static_cast<int>(ComputeKind::kW)] += seconds_since(c0);
        if (++weight_done_[a.stage] == microbatches_) on_stage_done_(a.stage);
        computed = true;
        break;
      }
    }
    if (computed) track_stash(counters);
    if (trace && computed) {
      counters.timeline.push_back({schedule::to_string(a),
                                   std::chrono::duration<double, std::micro>(c0 - step_start).count(),
                                   std::chrono::duration<double, std::micro>(Clock::now() - c0).count()});
    }
    reap_sends(false);
    if (progress_) progress_();
  }
  reap_sends(true);
  if (outcome.error) {
    // Drop what the failed step left behind so the next step starts clean.
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
  local_inputs_.clear();
  local_grads_.clear();
  counters.pipeline_seconds = seconds_since(step_start);
  return outcome;
}

}  // namespace sluice::runtime
