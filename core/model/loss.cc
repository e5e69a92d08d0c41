#include "core/model/loss.h"

#include <string>
#include <vector>

#include "core/common/error.h"

namespace sluice::model {

LossKind parse_loss(const std::string& name) {
  const std::vector<std::string>& names = loss_kind_names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<LossKind>(i);
  }
  throw Error(ErrorCode::kConfig, "loss must be mse, cross_entropy or custom, got '" + name + "'");
}

namespace {

// The host's loss runs on host copies (a cuda stage's tensors live on the device).
void custom_loss(kernels::Backend& backend, const CustomLoss& loss, const kernels::Tensor& output,
                 const kernels::Tensor& target, int64_t global_batch, LossResult& result) {
  std::vector<float> prediction(static_cast<std::size_t>(output.size()));
  std::vector<float> targets(prediction.size());
  std::vector<float> grad(prediction.size(), 0.0f);
  backend.to_host(output, prediction.data());
  backend.to_host(target, targets.data());
  result.sum = loss(prediction.data(), targets.data(), output.rows(), output.cols(), global_batch, grad.data());
  result.grad = backend.from_host(output.rows(), output.cols(), grad.data());
}

}  // namespace

LossResult compute_loss(kernels::Backend& backend, LossKind kind, const kernels::Tensor& output,
                        const kernels::Tensor& target, int64_t global_batch, const CustomLoss* custom,
                        int64_t points) {
  if (global_batch < output.rows()) {
    throw Error(ErrorCode::kInvalidArgument, "global batch " + std::to_string(global_batch) +
                                                 " is smaller than the micro-batch's " +
                                                 std::to_string(output.rows()) + " samples");
  }
  if (points <= 0 || output.cols() % points != 0) {
    throw Error(ErrorCode::kInvalidArgument, "loss: " + std::to_string(points) + " points per channel do not divide " +
                                                 "the model output's " + std::to_string(output.cols()) + " features");
  }
  if (target.rows() != output.rows() || target.cols() != output.cols()) {
    throw Error(ErrorCode::kInvalidArgument,
                "loss target has shape [" + std::to_string(target.rows()) + "][" + std::to_string(target.cols()) +
                    "] but the model output is [" + std::to_string(output.rows()) + "][" +
                    std::to_string(output.cols()) + "]");
  }
  LossResult result;
  if (kind == LossKind::kCustom) {
    if (custom == nullptr || !*custom) {
      throw Error(ErrorCode::kConfig, "loss: custom needs a loss function registered with "
                                      "sluice_trainer_register_loss before sluice_trainer_start");
    }
    custom_loss(backend, *custom, output, target, global_batch, result);
    return result;
  }
  result.grad = backend.empty(output.rows(), output.cols());
  const double batch = static_cast<double>(global_batch);
  if (kind == LossKind::kMse) {
    // A sample's loss is the mean over its features, so the global loss is the mean over all elements.
    const double features = static_cast<double>(output.cols());
    const float grad_scale = static_cast<float>(1.0 / (batch * features));
    result.sum = backend.mse(output, target, grad_scale, result.grad) / features;
  } else if (points == 1) {
    const float grad_scale = static_cast<float>(1.0 / batch);
    result.sum = backend.softmax_cross_entropy(output, target, grad_scale, result.grad);
  } else {
    // A sample's loss is the mean over its points (as mse's is over its features).
    const double per_sample = static_cast<double>(points);
    const float grad_scale = static_cast<float>(1.0 / (batch * per_sample));
    result.sum =
        backend.channel_softmax_cross_entropy(output.cols() / points, output, target, grad_scale, result.grad) /
        per_sample;
  }
  return result;
}

}  // namespace sluice::model

namespace sluice::model {

LossResult compute_domain_loss(kernels::Backend& backend, FieldDomain& domain, LossKind kind, int64_t channels,
                               const kernels::Tensor& output, const kernels::Tensor& target, int64_t global_batch) {
  if (kind == LossKind::kCustom) {
    throw Error(ErrorCode::kUnsupported, "loss: custom on a split field (the host's loss sees a whole sample)");
  }
  if (output.cols() != channels * domain.block_points() || target.rows() != output.rows() ||
      target.cols() != output.cols() || global_batch < output.rows()) {
    throw Error(ErrorCode::kInvalidArgument,
                "loss on a split field: output [" + std::to_string(output.rows()) + "][" +
                    std::to_string(output.cols()) + "] and target [" + std::to_string(target.rows()) + "][" +
                    std::to_string(target.cols()) + "] must both be " + std::to_string(channels) + " channels x " +
                    std::to_string(domain.block_points()) + " block points per sample, at most " +
                    std::to_string(global_batch) + " samples");
  }
  int64_t points = 1;
  for (const int64_t e : domain.global_extent()) points *= e;
  // A sample's loss is the mean over its features (mse) or its points (cross entropy), as compute_loss's.
  const double per_sample = static_cast<double>(kind == LossKind::kMse ? channels * points : points);
  const float grad_scale = static_cast<float>(1.0 / (static_cast<double>(global_batch) * per_sample));
  const kernels::FieldLoss loss =
      kind == LossKind::kMse ? kernels::FieldLoss::kMse : kernels::FieldLoss::kChannelCrossEntropy;
  LossResult result;
  result.grad = backend.empty(output.rows(), output.cols());
  result.sum = domain.field_loss(backend, loss, channels, output, target, grad_scale, result.grad, "field loss") /
               per_sample;
  return result;
}

}  // namespace sluice::model
