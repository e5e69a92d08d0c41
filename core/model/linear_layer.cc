#include "core/model/linear_layer.h"

namespace sluice::model {

using kernels::Tensor;

LinearLayer::LinearLayer(kernels::Backend& backend, int64_t in_features, int64_t out_features, bool with_bias)
    : affine_(backend, in_features, out_features, with_bias, "") {}

std::vector<Parameter*> LinearLayer::parameters() {
  std::vector<Parameter*> out;
  affine_.append_parameters(out);
  return out;
}

void LinearLayer::init(uint64_t seed) { affine_.init(seed, global_index(), 0); }

Tensor LinearLayer::forward(const Tensor& x, const ForwardContext& context, LayerSaved& saved) {
  (void)context;
  saved.tensors = {x};  // the weight gradient needs the input
  return affine_.forward(x);
}

Tensor LinearLayer::backward_input(const Tensor& dy, LayerSaved& saved) {
  (void)saved;
  return affine_.backward_input(dy);
}

void LinearLayer::backward_weight(const Tensor& dy, LayerSaved& saved) { affine_.accumulate_grads(dy, saved.tensors[0]); }

}  // namespace sluice::model
