#include "core/model/activation_layer.h"

#include "core/model/layer_costs.h"

namespace sluice::model {

using kernels::Tensor;

ActivationLayer::ActivationLayer(kernels::Backend& backend, kernels::Activation activation, int64_t features)
    : backend_(backend), activation_(activation), features_(features) {}

double ActivationLayer::flops_per_sample() const { return activation_flops(activation_, features_); }

Tensor ActivationLayer::forward(Tensor x, const ForwardContext& context, LayerSaved& saved) {
  (void)context;
  Tensor y = backend_.empty(x.rows(), x.cols());
  backend_.activation_forward(activation_, x, y);
  keep_for_backward(std::move(x), y, saved);
  return y;
}

void ActivationLayer::keep_for_backward(Tensor x, const Tensor& y, LayerSaved& saved) const {
  // GELU keeps its input, which nothing else needs: moved, not copied. ReLU and tanh keep their output, which
  // is also what the next layer gets: that one is a copy.
  saved.tensors.clear();
  if (kernels::activation_backward_uses_input(activation_)) {
    saved.tensors.push_back(std::move(x));
  } else {
    saved.tensors.push_back(y);
  }
}

Tensor ActivationLayer::backward_input(const Tensor& dy, LayerSaved& saved) {
  Tensor dx = backend_.empty(dy.rows(), dy.cols());
  backend_.activation_backward(activation_, saved.tensors[0], dy, dx);
  return dx;
}

}  // namespace sluice::model
