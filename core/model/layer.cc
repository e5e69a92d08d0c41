#include "core/model/layer.h"

namespace sluice::model {

std::string Parameter::qualified_name() const { return "layers." + std::to_string(layer_index) + "." + name; }

std::vector<int64_t> Parameter::stored_shape() const {
  if (!shape.empty()) return shape;
  return {value.rows(), value.cols()};
}

size_t LayerSaved::bytes() const {
  size_t total = 0;
  for (const auto& tensor : tensors) total += tensor.bytes();
  for (const auto& tensor : weight_grad_inputs) total += tensor.bytes();
  return total + halo_input.bytes();
}

kernels::Tensor LayerSaved::take_halo_input() {
  kernels::Tensor taken = std::move(halo_input);  // leaves halo_input empty (kernels/tensor.h)
  return taken;
}

kernels::Tensor Layer::backward(const kernels::Tensor& dy, LayerSaved& saved) {
  kernels::Tensor dx = backward_input(dy, saved);
  backward_weight(dy, saved);
  return dx;
}

void Layer::backward_input_without_dx(const kernels::Tensor& dy, LayerSaved& saved) {
  (void)backward_input(dy, saved);
}

void Layer::backward_without_dx(const kernels::Tensor& dy, LayerSaved& saved) { (void)backward(dy, saved); }

bool Layer::forward_with_next(Layer& next, kernels::Tensor& x, const ForwardContext& context, LayerSaved& saved,
                              LayerSaved& next_saved, kernels::Tensor* between, kernels::Tensor& y) {
  (void)next, (void)x, (void)context, (void)saved, (void)next_saved, (void)between, (void)y;
  return false;
}

void Layer::set_global_index(int index) {
  global_index_ = index;
  for (Parameter* parameter : parameters()) parameter->layer_index = index;
}

}  // namespace sluice::model
