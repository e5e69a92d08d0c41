#include "core/model/residual_mlp_layer.h"

#include "core/model/layer_costs.h"

namespace sluice::model {

using kernels::Tensor;

// saved.tensors layout: the input, the activation output (fc2's weight grad needs it), and the activation
// input when the activation differentiates from its input (GELU).
constexpr size_t kInput = 0;
constexpr size_t kHidden = 1;
constexpr size_t kPreActivation = 2;
// saved.weight_grad_inputs layout: dL/d(fc1 output), computed by I and needed by fc1's weight grad in W.
constexpr size_t kFc1OutputGrad = 0;

ResidualMlpLayer::ResidualMlpLayer(kernels::Backend& backend, int64_t features, int64_t hidden,
                                   kernels::Activation activation)
    : backend_(backend),
      activation_(activation),
      fc1_(backend, features, hidden, true, "fc1."),
      fc2_(backend, hidden, features, true, "fc2.") {}

double ResidualMlpLayer::flops_per_sample() const {
  return residual_mlp_flops(fc1_.in_features(), fc1_.out_features());
}

std::vector<Parameter*> ResidualMlpLayer::parameters() {
  std::vector<Parameter*> out;
  fc1_.append_parameters(out);
  fc2_.append_parameters(out);
  return out;
}

void ResidualMlpLayer::init(uint64_t seed) {
  fc1_.init(seed, global_index(), 0);
  fc2_.init(seed, global_index(), 2);
}

Tensor ResidualMlpLayer::forward(Tensor x, const ForwardContext& context, LayerSaved& saved) {
  (void)context;
  Tensor pre_activation;
  Tensor hidden = fc1_.forward_activated(x, activation_, pre_activation);
  Tensor y = fc2_.forward(hidden);
  backend_.axpy(1.0f, x, y);
  saved.tensors.clear();
  saved.tensors.push_back(std::move(x));
  saved.tensors.push_back(std::move(hidden));
  if (kernels::activation_backward_uses_input(activation_)) saved.tensors.push_back(std::move(pre_activation));
  return y;
}

Tensor ResidualMlpLayer::fc1_output_grad(const Tensor& dy, const LayerSaved& saved) {
  Tensor hidden_grad = fc2_.backward_input(dy);
  const Tensor& activation_saved = kernels::activation_backward_uses_input(activation_)
                                       ? saved.tensors[kPreActivation]
                                       : saved.tensors[kHidden];
  Tensor pre_activation_grad = backend_.empty(hidden_grad.rows(), hidden_grad.cols());
  backend_.activation_backward(activation_, activation_saved, hidden_grad, pre_activation_grad);
  return pre_activation_grad;
}

Tensor ResidualMlpLayer::backward_input(const Tensor& dy, LayerSaved& saved) {
  Tensor pre_activation_grad = fc1_output_grad(dy, saved);
  Tensor dx = fc1_.backward_input(pre_activation_grad);
  backend_.axpy(1.0f, dy, dx);  // the skip connection
  saved.weight_grad_inputs = {std::move(pre_activation_grad)};
  return dx;
}

void ResidualMlpLayer::backward_input_without_dx(const Tensor& dy, LayerSaved& saved) {
  saved.weight_grad_inputs = {fc1_output_grad(dy, saved)};
}

void ResidualMlpLayer::backward_without_dx(const Tensor& dy, LayerSaved& saved) {
  backward_input_without_dx(dy, saved);
  backward_weight(dy, saved);
}

void ResidualMlpLayer::backward_weight(const Tensor& dy, LayerSaved& saved) {
  fc2_.accumulate_grads(dy, saved.tensors[kHidden]);
  fc1_.accumulate_grads(saved.weight_grad_inputs[kFc1OutputGrad], saved.tensors[kInput]);
}

}  // namespace sluice::model
