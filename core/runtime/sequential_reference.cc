#include "core/runtime/sequential_reference.h"

#include <algorithm>
#include <cmath>

#include "core/common/error.h"
#include "core/data/normalization_file.h"
#include "core/model/lr_schedule.h"
#include "core/model/model_shape.h"
#include "core/runtime/microbatch_rows.h"
#include "kernels/cpu/cpu_backend.h"

namespace sluice::runtime {

namespace {

// The Trainer's clipping (Trainer::clip_gradients): per-layer sums of squares added in layer order.
void clip_by_global_norm(const std::vector<model::Parameter*>& params, double max_norm, size_t layers) {
  kernels::Backend& backend = kernels::cpu_backend();
  if (max_norm > 0.0) {
    std::vector<double> per_layer(layers, 0.0);
    for (model::Parameter* p : params) per_layer[p->layer_index] += backend.sum_of_squares(p->grad);
    double total = 0.0;
    for (double s : per_layer) total += s;
    const double norm = std::sqrt(total);
    if (norm > max_norm) {
      const float coefficient = static_cast<float>(max_norm / (norm + 1e-6));
      for (model::Parameter* p : params) backend.scale(coefficient, p->grad);
    }
  }
}

}  // namespace

SequentialReference::SequentialReference(const config::Config& cfg, int data_parallel,
                                         model::CustomLayerRegistry custom_layers)
    : cfg_(cfg), data_parallel_(data_parallel), loss_kind_(cfg.loss) {
  kernels::Backend& backend = kernels::cpu_backend();
  std::vector<std::unique_ptr<model::Layer>> layers = model::build_layers(cfg_.model, backend, custom_layers);
  model::init_layers(layers, cfg_.seed);
  stage_ = std::make_unique<model::StageModule>(backend, 0, std::move(layers));
  optimizer_ = model::make_optimizer(cfg_.optimizer, stage_->parameters(), backend);
  // Per channel on a field side, as the trainer (the same shapes: model_shape with the same custom layers).
  const std::vector<model::LayerShape> shapes = model::model_shape(cfg_.model, custom_layers);
  normalization_.configure(data::with_file_statistics(cfg_.normalization), stage_->in_features(),
                           stage_->out_features(), config::field_points(shapes.front().in_shape),
                           config::field_points(shapes.back().out_shape));
  output_points_ = config::field_points(shapes.back().out_shape);
}

double SequentialReference::train_step(const float* inputs, const float* targets, int64_t global_rows) {
  kernels::Backend& backend = kernels::cpu_backend();
  const int M = cfg_.pipeline.microbatches;
  if (global_rows % data_parallel_ != 0 || global_rows / data_parallel_ < M) {
    throw Error(ErrorCode::kInvalidArgument, "batch of " + std::to_string(global_rows) + " rows does not split into " +
                                                 std::to_string(data_parallel_) + " equal replica batches of at least " +
                                                 std::to_string(M) + " rows");
  }
  const int64_t replica_rows = global_rows / data_parallel_;
  // As the Trainer after a checkpoint of an older version: every earlier call the size of this one.
  if (!samples_known_) samples_ = step_ * static_cast<uint64_t>(global_rows);
  samples_known_ = true;
  const int64_t in = input_features(), out = output_features();
  // Normalization as the Trainer applies it: auto statistics from the first call's first samples, then the
  // same element-wise function on the whole batch.
  const int64_t used = std::min<int64_t>(cfg_.normalization.samples, global_rows);
  if (normalization_.inputs_pending()) {
    normalization_.set_inputs(statistics_of(inputs, used, in, normalization_.input_points()));
  }
  if (normalization_.targets_pending()) {
    normalization_.set_targets(statistics_of(targets, used, out, normalization_.output_points()));
  }
  const std::vector<float> normalized_inputs = normalized(inputs, global_rows, normalization_.inputs());
  const std::vector<float> normalized_targets = normalized(targets, global_rows, normalization_.targets());
  if (!normalized_inputs.empty()) inputs = normalized_inputs.data();
  if (!normalized_targets.empty()) targets = normalized_targets.data();
  std::vector<model::Parameter*> params = parameters();
  // Each replica's gradients, kept apart and then added in replica order (as the ordered DP sum does).
  std::vector<std::vector<std::vector<float>>> replica_grads(data_parallel_);
  double loss_total = 0.0;
  const model::StepInfo info{cfg_.seed, step_, true};
  for (int r = 0; r < data_parallel_; ++r) {
    stage_->zero_grad();
    double replica_loss = 0.0;
    for (int m = 0; m < M; ++m) {
      const MicrobatchRows part = microbatch_rows(replica_rows, M, m);  // as the executor cuts it
      const int64_t row = r * replica_rows + part.first;
      const int64_t mb_rows = part.count;
      const int mb = r * M + m;  // the same global micro-batch number the pipeline uses (names the stash)
      // The sample stream's position of this micro-batch's row 0 (runtime::StepData::first_sample): the samples
      // of every earlier call, then this call's rows replica-major. It keys dropout.
      model::StepInfo mb_info = info;
      mb_info.first_sample = samples_ + static_cast<uint64_t>(row);
      kernels::Tensor x = backend.from_host(mb_rows, in, inputs + row * in);
      kernels::Tensor y = stage_->forward(mb, std::move(x), mb_info);
      kernels::Tensor t = backend.from_host(mb_rows, out, targets + row * out);
      model::LossResult loss = model::compute_loss(backend, loss_kind_, y, t, global_rows, nullptr, output_points_);
      replica_loss += loss.sum;
      stage_->backward(mb, std::move(loss.grad));  // empty: the model input's gradient is not computed
    }
    loss_total += replica_loss;
    if (data_parallel_ > 1) {
      for (model::Parameter* p : params) replica_grads[r].push_back(p->grad.to_vector());
    }
  }
  for (size_t i = 0; data_parallel_ > 1 && i < params.size(); ++i) {
    float* g = params[i]->grad.data();
    for (int64_t k = 0; k < params[i]->grad.size(); ++k) {
      float acc = replica_grads[0][i][k];
      for (int r = 1; r < data_parallel_; ++r) acc += replica_grads[r][i][k];
      g[k] = acc;
    }
  }
  clip_by_global_norm(params, cfg_.optimizer.clip_grad_norm, cfg_.model.layers.size());
  // The same schedule as the trainer's (no override: the oracle has no C API).
  optimizer_->set_lr(model::scheduled_lr(cfg_.optimizer.lr_schedule, cfg_.optimizer.lr, optimizer_->step_count()));
  optimizer_->step();
  ++step_;
  samples_ += static_cast<uint64_t>(global_rows);
  return loss_total / static_cast<double>(global_rows);
}

}  // namespace sluice::runtime
