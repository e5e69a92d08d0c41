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

// The block of `domain` as a mask key; the layer's features are its channels times the block's points.
kernels::FieldBlockKey block_key(const FieldDomain& domain, int64_t features) {
  const int64_t points = domain.block_points();
  if (features % points != 0) {
    throw Error(ErrorCode::kInvalidArgument, "dropout on a split field: " + std::to_string(features) +
                                                 " features per sample are not whole channels of the block's " +
                                                 std::to_string(points) + " points");
  }
  return kernels::FieldBlockKey{features / points, domain.global_extent(), domain.block_offset(),
                                domain.block_extent()};
}

}  // namespace

DropoutLayer::DropoutLayer(kernels::Backend& backend, int64_t features, float p, const FieldDomain* domain)
    : backend_(backend), features_(features), p_(p) {
  if (!(p >= 0.0f && p < 1.0f)) {
    throw Error(ErrorCode::kInvalidArgument, "dropout probability must be in [0, 1), got " + std::to_string(p));
  }
  if (domain != nullptr) block_ = block_key(*domain, features);
}

Tensor DropoutLayer::forward(Tensor x, const ForwardContext& context, LayerSaved& saved) {
  saved.context = context;  // backward regenerates the mask from it
  if (!active(context)) return x;
  Tensor y = backend_.empty(x.rows(), x.cols());
  if (block_) {
    backend_.dropout_block_forward(x, p_, mask_stream(context, block_->field_features()), *block_, y);
  } else {
    backend_.dropout_forward(x, p_, mask_stream(context, features_), y);
  }
  return y;
}

Tensor DropoutLayer::backward_input(const Tensor& dy, LayerSaved& saved) {
  if (!active(saved.context)) return dy;
  Tensor dx = backend_.empty(dy.rows(), dy.cols());
  if (block_) {
    backend_.dropout_block_backward(dy, p_, mask_stream(saved.context, block_->field_features()), *block_, dx);
  } else {
    backend_.dropout_backward(dy, p_, mask_stream(saved.context, features_), dx);
  }
  return dx;
}

}  // namespace sluice::model
