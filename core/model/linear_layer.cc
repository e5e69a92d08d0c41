#include "core/model/linear_layer.h"

#include "core/model/activation_layer.h"

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

Tensor LinearLayer::forward(Tensor x, const ForwardContext& context, LayerSaved& saved) {
  (void)context;
  Tensor y = affine_.forward(x);
  saved.tensors.clear();
  saved.tensors.push_back(std::move(x));  // the weight gradient needs the input
  return y;
}

bool LinearLayer::forward_with_next(Layer& next, Tensor& x, const ForwardContext& context, LayerSaved& saved,
                                    LayerSaved& next_saved, Tensor* between, Tensor& y) {
  auto* activation = dynamic_cast<ActivationLayer*>(&next);
  if (activation == nullptr) return false;
  (void)context;
  Tensor pre;
  y = affine_.forward_activated(x, activation->activation(), pre);
  saved.tensors.clear();
  saved.tensors.push_back(std::move(x));
  if (between != nullptr) *between = pre;  // the only copy, and only when the caller asks
  activation->keep_for_backward(std::move(pre), y, next_saved);
  return true;
}

Tensor LinearLayer::backward_input(const Tensor& dy, LayerSaved& saved) {
  (void)saved;
  return affine_.backward_input(dy);
}

void LinearLayer::backward_weight(const Tensor& dy, LayerSaved& saved) { affine_.accumulate_grads(dy, saved.tensors[0]); }

void LinearLayer::backward_input_without_dx(const Tensor& dy, LayerSaved& saved) {
  (void)dy;
  (void)saved;
}

void LinearLayer::backward_without_dx(const Tensor& dy, LayerSaved& saved) { backward_weight(dy, saved); }

}  // namespace sluice::model
