#include "core/model/stage_module.h"

#include <algorithm>
#include <string>
#include <utility>

#include "core/common/error.h"

namespace sluice::model {

using kernels::Tensor;

RecomputePolicy parse_recompute(const std::string& mode, const std::vector<int>& layers) {
  const std::vector<std::string>& names = recompute_mode_names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == mode) return recompute_policy(static_cast<RecomputeMode>(i), layers);
  }
  throw Error(ErrorCode::kConfig, "pipeline.recompute must be none, full or selective, got '" + mode + "'");
}

RecomputePolicy recompute_policy(RecomputeMode mode, const std::vector<int>& layers, config::RecomputeHalos halos) {
  RecomputePolicy policy;
  policy.mode = mode;
  policy.halos = halos;
  if (mode == RecomputeMode::kSelective) policy.layers.insert(layers.begin(), layers.end());
  return policy;
}

size_t StageModule::Stash::bytes() const {
  size_t total = 0;
  for (const auto& layer_saved : saved) {
    if (layer_saved) total += layer_saved->bytes();
  }
  for (const auto& entry : run_inputs) total += entry.second.bytes();
  for (const auto& entry : halo_inputs) total += entry.second.bytes();
  for (const auto& tensor : weight_grad_outputs) total += tensor.bytes();
  return total;
}

StageModule::StageModule(kernels::Backend& backend, int first, std::vector<std::unique_ptr<Layer>> layers,
                         RecomputePolicy recompute, bool fuse_layers, bool skip_model_input_grad)
    : backend_(backend),
      first_(first),
      layers_(std::move(layers)),
      fuse_layers_(fuse_layers),
      skip_model_input_grad_(skip_model_input_grad),
      stash_halos_(recompute.halos == config::RecomputeHalos::kStash) {
  if (layers_.empty()) {
    throw Error(ErrorCode::kInvalidArgument, "stage starting at layer " + std::to_string(first) + " has no layers");
  }
  for (size_t local = 0; local < layers_.size(); ++local) {
    const int expected = first_ + static_cast<int>(local);
    if (!layers_[local]) {
      throw Error(ErrorCode::kInvalidArgument, "stage layer " + std::to_string(expected) + " is null");
    }
    if (layers_[local]->global_index() != expected) {
      throw Error(ErrorCode::kInvalidArgument, "stage expects global layer " + std::to_string(expected) +
                                                   " at position " + std::to_string(local) + " but that layer has index " +
                                                   std::to_string(layers_[local]->global_index()));
    }
    if (local > 0 && layers_[local]->in_features() != layers_[local - 1]->out_features()) {
      throw Error(ErrorCode::kInvalidArgument,
                  "layer " + std::to_string(expected) + " takes " + std::to_string(layers_[local]->in_features()) +
                      " features but layer " + std::to_string(expected - 1) + " gives " +
                      std::to_string(layers_[local - 1]->out_features()));
    }
    const bool drop = recompute.mode == RecomputeMode::kFull ||
                      (recompute.mode == RecomputeMode::kSelective && recompute.layers.count(expected) > 0);
    dropped_.push_back(drop);
  }
}

Layer& StageModule::layer(int global_index) {
  if (global_index < first_layer() || global_index >= last_layer()) {
    throw Error(ErrorCode::kInvalidArgument, "layer " + std::to_string(global_index) + " is not in this stage [" +
                                                 std::to_string(first_layer()) + ", " + std::to_string(last_layer()) +
                                                 ")");
  }
  return *layers_[static_cast<size_t>(global_index - first_)];
}

bool StageModule::dropped(size_t local) const { return dropped_[local]; }

ForwardContext StageModule::context_for(const Stash& stash, int microbatch, size_t local) const {
  ForwardContext context;
  context.seed = stash.step.seed;
  context.step = stash.step.step;
  context.microbatch = microbatch;
  context.layer_index = first_ + static_cast<int>(local);
  context.training = stash.step.training;
  context.first_sample = stash.step.first_sample;
  return context;
}

StageModule::Stash& StageModule::find_stash(int microbatch, const char* action) {
  auto found = stashes_.find(microbatch);
  if (found == stashes_.end()) {
    throw Error(ErrorCode::kState, std::string(action) + " of micro-batch " + std::to_string(microbatch) +
                                       " on stage [" + std::to_string(first_layer()) + ", " +
                                       std::to_string(last_layer()) + "): no forward of it is stashed");
  }
  return found->second;
}

Tensor StageModule::forward(int microbatch, Tensor input, const StepInfo& step) {
  if (stashes_.count(microbatch) > 0) {
    throw Error(ErrorCode::kState, "forward of micro-batch " + std::to_string(microbatch) + " on stage [" +
                                       std::to_string(first_layer()) + ", " + std::to_string(last_layer()) +
                                       "): it is already stashed (its backward has not run)");
  }
  if (input.cols() != in_features()) {
    throw Error(ErrorCode::kInvalidArgument, "stage [" + std::to_string(first_layer()) + ", " +
                                                 std::to_string(last_layer()) + ") takes " +
                                                 std::to_string(in_features()) + " input features, got " +
                                                 std::to_string(input.cols()));
  }
  Stash stash;
  stash.step = step;
  stash.saved.resize(layers_.size());
  Tensor output = run_forward(microbatch, stash, 0, layers_.size(), std::move(input), false);
  stashes_.emplace(microbatch, std::move(stash));
  note_peaks();
  return output;
}

Tensor StageModule::run_forward(int microbatch, Stash& stash, size_t begin, size_t end, Tensor activation,
                                bool recomputing) {
  // A layer's input is kept (copied: the layer gets it too) when it starts a run of dropped layers, which
  // re-runs from it; its saved state is kept unless it is dropped, except on the recompute, which restores it.
  const auto keeps_run_input = [&](size_t local) {
    return !recomputing && dropped(local) && (local == 0 || !dropped(local - 1));
  };
  // Under kStash a dropped layer's halo-filled input outlives the rest of its saved state, and its recompute gets
  // it back instead of filling the halo again.
  const auto prepare_saved = [&](size_t local, LayerSaved& saved) {
    if (!recomputing) {
      saved.keep_halos = stash_halos_ && dropped(local);
      return;
    }
    const auto kept = stash.halo_inputs.find(local);
    if (kept == stash.halo_inputs.end()) return;
    saved.halo_input = std::move(kept->second);
    stash.halo_inputs.erase(kept);
  };
  const auto keep_saved = [&](size_t local, LayerSaved& saved) {
    if (recomputing || !dropped(local)) {
      stash.saved[local] = std::move(saved);
    } else if (saved.keep_halos && !saved.halo_input.empty()) {
      stash.halo_inputs.emplace(local, saved.take_halo_input());
    }
  };
  size_t local = begin;
  while (local < end) {
    const ForwardContext context = context_for(stash, microbatch, local);
    if (keeps_run_input(local)) stash.run_inputs.emplace(local, activation);
    LayerSaved saved;
    prepare_saved(local, saved);
    if (fuse_layers_ && local + 1 < end) {
      LayerSaved next_saved;
      prepare_saved(local + 1, next_saved);
      Tensor between;
      Tensor output;
      if (layers_[local]->forward_with_next(*layers_[local + 1], activation, context, saved, next_saved,
                                            keeps_run_input(local + 1) ? &between : nullptr, output)) {
        keep_saved(local, saved);
        if (keeps_run_input(local + 1)) stash.run_inputs.emplace(local + 1, std::move(between));
        keep_saved(local + 1, next_saved);
        activation = std::move(output);
        local += 2;
        continue;
      }
      // Not fused: next's own forward takes its halo back on the next turn.
      if (!next_saved.halo_input.empty()) stash.halo_inputs.emplace(local + 1, next_saved.take_halo_input());
    }
    // Moved in: the layer keeps its input without a copy if it needs it, and nothing here needs it any more.
    activation = layers_[local]->forward(std::move(activation), context, saved);
    keep_saved(local, saved);
    ++local;
  }
  return activation;
}

void StageModule::recompute_dropped(int microbatch, Stash& stash) {
  for (auto& entry : stash.run_inputs) {
    size_t end = entry.first;
    while (end < layers_.size() && dropped(end)) ++end;
    run_forward(microbatch, stash, entry.first, end, std::move(entry.second), true);
  }
  stash.run_inputs.clear();
  note_peaks();
}

void StageModule::check_grad_shape(const Tensor& grad_output) const {
  if (grad_output.cols() != out_features()) {
    throw Error(ErrorCode::kInvalidArgument, "stage [" + std::to_string(first_layer()) + ", " +
                                                 std::to_string(last_layer()) + ") gives " +
                                                 std::to_string(out_features()) + " output features, but the " +
                                                 "gradient has " + std::to_string(grad_output.cols()));
  }
}

Tensor StageModule::backward_input(int microbatch, Tensor grad_output) {
  Stash& stash = find_stash(microbatch, "backward_input");
  if (stash.input_grad_done) {
    throw Error(ErrorCode::kState, "backward_input of micro-batch " + std::to_string(microbatch) +
                                       " ran twice without backward_weight in between");
  }
  check_grad_shape(grad_output);
  recompute_dropped(microbatch, stash);
  stash.weight_grad_outputs.resize(layers_.size());
  Tensor grad = std::move(grad_output);
  for (size_t local = layers_.size(); local-- > 0;) {
    Layer& current = *layers_[local];
    const bool needs_weight_pass = !current.parameters().empty();
    Tensor grad_input;  // stays empty for the model's input
    if (local == 0 && skips_input_grad()) {
      current.backward_input_without_dx(grad, *stash.saved[local]);
    } else {
      grad_input = current.backward_input(grad, *stash.saved[local]);
    }
    if (needs_weight_pass) {
      stash.weight_grad_outputs[local] = std::move(grad);
    } else {
      stash.saved[local].reset();  // nothing left for W to do with it
    }
    grad = std::move(grad_input);
  }
  stash.input_grad_done = true;
  note_peaks();
  return grad;
}

void StageModule::backward_weight(int microbatch) {
  Stash& stash = find_stash(microbatch, "backward_weight");
  if (!stash.input_grad_done) {
    throw Error(ErrorCode::kState, "backward_weight of micro-batch " + std::to_string(microbatch) +
                                       " before its backward_input");
  }
  // Same layer order as the fused backward, so each gradient buffer sees the same sequence of additions.
  for (size_t local = layers_.size(); local-- > 0;) {
    if (stash.saved[local]) layers_[local]->backward_weight(stash.weight_grad_outputs[local], *stash.saved[local]);
  }
  stashes_.erase(microbatch);
}

Tensor StageModule::backward(int microbatch, Tensor grad_output) {
  Stash& stash = find_stash(microbatch, "backward");
  if (stash.input_grad_done) {
    throw Error(ErrorCode::kState, "backward of micro-batch " + std::to_string(microbatch) +
                                       " after its backward_input; call backward_weight instead");
  }
  check_grad_shape(grad_output);
  recompute_dropped(microbatch, stash);
  Tensor grad = std::move(grad_output);
  for (size_t local = layers_.size(); local-- > 0;) {
    if (local == 0 && skips_input_grad()) {
      layers_[local]->backward_without_dx(grad, *stash.saved[local]);
      grad = Tensor();  // the model's input gradient: not computed
    } else {
      grad = layers_[local]->backward(grad, *stash.saved[local]);
    }
    stash.saved[local].reset();
  }
  stashes_.erase(microbatch);
  return grad;
}

void StageModule::discard(int microbatch) {
  find_stash(microbatch, "discard");
  stashes_.erase(microbatch);
}

void StageModule::finish_domain_step() {
  for (auto& layer : layers_) layer->finish_domain_step();
}

void StageModule::zero_grad() {
  for (Parameter* parameter : parameters()) backend_.fill(0.0f, parameter->grad);
}

std::vector<Parameter*> StageModule::parameters() {
  std::vector<Parameter*> all;
  for (auto& layer : layers_) {
    for (Parameter* parameter : layer->parameters()) all.push_back(parameter);
  }
  return all;
}

size_t StageModule::stashed_bytes() const {
  size_t total = 0;
  for (const auto& entry : stashes_) total += entry.second.bytes();
  return total;
}

void StageModule::reset_peaks() {
  peak_microbatches_ = stashes_.size();
  peak_bytes_ = stashed_bytes();
}

void StageModule::note_peaks() {
  peak_microbatches_ = std::max(peak_microbatches_, stashes_.size());
  peak_bytes_ = std::max(peak_bytes_, stashed_bytes());
}

}  // namespace sluice::model
