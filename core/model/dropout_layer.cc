#include "core/model/dropout_layer.h"

#include <string>

#include "core/common/error.h"

namespace sluice::model {

using kernels::Tensor;

namespace {

// Keyed by (seed, layer, global sample, feature) only: not by step or micro-batch, whose samples the global
// sample index already names, so the layout (replicas, stages, micro-batches) does not change the masks.
kernels::RngStream mask_stream(const ForwardContext& context, int64_t features) {
  return kernels::dropout_stream(context.seed, context.layer_index, context.first_sample, features);
}

}  // namespace

DropoutLayer::DropoutLayer(kernels::Backend& backend, int64_t features, float p)
    : backend_(backend), features_(features), p_(p) {
  if (!(p >= 0.0f && p < 1.0f)) {
    throw Error(ErrorCode::kInvalidArgument, "dropout probability must be in [0, 1), got " + std::to_string(p));
  }
}

Tensor DropoutLayer::forward(Tensor x, const ForwardContext& context, LayerSaved& saved) {
  saved.context = context;  // backward regenerates the mask from it
  if (!active(context)) return x;
  Tensor y = backend_.empty(x.rows(), x.cols());
  backend_.dropout_forward(x, p_, mask_stream(context, features_), y);
  return y;
}

Tensor DropoutLayer::backward_input(const Tensor& dy, LayerSaved& saved) {
  if (!active(saved.context)) return dy;
  Tensor dx = backend_.empty(dy.rows(), dy.cols());
  backend_.dropout_backward(dy, p_, mask_stream(saved.context, features_), dx);
  return dx;
}

}  // namespace sluice::model
