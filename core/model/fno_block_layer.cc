#include "core/model/fno_block_layer.h"

#include <cmath>
#include <utility>

#include "core/model/layer_costs.h"
#include "core/model/spectral_conv_layer.h"

namespace sluice::model {

using kernels::Tensor;

namespace {

kernels::ConvGeometry pointwise_geometry(const kernels::SpectralGeometry& g) {
  kernels::ConvGeometry conv;
  conv.in_channels = g.in_channels;
  conv.out_channels = g.out_channels;
  conv.in = g.extents;
  conv.kernel.assign(g.dims(), 1);
  conv.stride.assign(g.dims(), 1);
  conv.dilation.assign(g.dims(), 1);
  conv.pad_low.assign(g.dims(), 0);
  conv.pad_high.assign(g.dims(), 0);
  kernels::complete_conv_geometry(conv);
  return conv;
}

Parameter dense_parameter(kernels::Backend& backend, std::string name, int64_t rows, int64_t cols,
                          std::vector<int64_t> shape) {
  Parameter p;
  p.name = std::move(name);
  p.value = backend.zeros(rows, cols);
  p.grad = backend.zeros(rows, cols);
  p.shape = std::move(shape);
  return p;
}

}  // namespace

FnoBlockLayer::FnoBlockLayer(kernels::Backend& backend, const kernels::SpectralGeometry& geometry)
    : backend_(backend), geometry_(geometry) {
  kernels::check_spectral_geometry(geometry_);
  pointwise_geometry_ = pointwise_geometry(geometry_);
  spectral_ = spectral_weight(backend, geometry_, "spectral.weight");
  std::vector<int64_t> shape = {geometry_.out_channels, geometry_.in_channels};
  shape.resize(2 + geometry_.dims(), 1);
  pointwise_ = dense_parameter(backend, "pointwise.weight", geometry_.out_channels, geometry_.in_channels,
                               std::move(shape));
  bias_ = dense_parameter(backend, "pointwise.bias", 1, geometry_.out_channels, {geometry_.out_channels});
}

double FnoBlockLayer::flops_per_sample() const { return fno_block_flops(geometry_); }

void FnoBlockLayer::init(uint64_t seed) {
  init_spectral_weight(backend_, geometry_, seed, global_index(), 0, spectral_);
  const float bound = static_cast<float>(1.0 / std::sqrt(static_cast<double>(geometry_.in_channels)));
  backend_.fill_uniform(kernels::init_stream(seed, global_index(), 1), -bound, bound, pointwise_.value);
  backend_.fill_uniform(kernels::init_stream(seed, global_index(), 2), -bound, bound, bias_.value);
}

Tensor FnoBlockLayer::forward(Tensor x, const ForwardContext& context, LayerSaved& saved) {
  (void)context;
  Tensor pre = backend_.empty(x.rows(), geometry_.out_features());
  backend_.spectral_conv_forward(geometry_, x, spectral_.value, pre);
  Tensor pointwise = backend_.empty(x.rows(), geometry_.out_features());
  backend_.conv_forward(pointwise_geometry_, x, pointwise_.value, &bias_.value, pointwise);
  backend_.axpy(1.0f, pointwise, pre);
  Tensor y = backend_.empty(x.rows(), geometry_.out_features());
  backend_.activation_forward(kernels::Activation::kGelu, pre, y);
  saved.tensors.clear();
  saved.tensors.push_back(std::move(x));
  saved.tensors.push_back(std::move(pre));
  return y;
}

Tensor FnoBlockLayer::pre_activation_grad(const Tensor& dy, const LayerSaved& saved) {
  Tensor dpre = backend_.empty(dy.rows(), geometry_.out_features());
  backend_.activation_backward(kernels::Activation::kGelu, saved.tensors[1], dy, dpre);
  return dpre;
}

Tensor FnoBlockLayer::backward_input(const Tensor& dy, LayerSaved& saved) {
  Tensor dpre = pre_activation_grad(dy, saved);
  Tensor dx = backend_.empty(dy.rows(), geometry_.in_features());
  backend_.spectral_conv_backward_data(geometry_, dpre, spectral_.value, dx);
  Tensor pointwise = backend_.empty(dy.rows(), geometry_.in_features());
  backend_.conv_backward_data(pointwise_geometry_, dpre, pointwise_.value, pointwise);
  backend_.axpy(1.0f, pointwise, dx);
  saved.weight_grad_inputs.clear();
  saved.weight_grad_inputs.push_back(std::move(dpre));
  return dx;
}

void FnoBlockLayer::backward_weight(const Tensor& dy, LayerSaved& saved) {
  (void)dy;
  const Tensor& dpre = saved.weight_grad_inputs[0];
  backend_.spectral_conv_accumulate_weight_grad(geometry_, saved.tensors[0], dpre, spectral_.grad);
  backend_.conv_accumulate_param_grads(pointwise_geometry_, saved.tensors[0], dpre, pointwise_.grad, &bias_.grad);
}

// The model's first layer: only the gradient before the GELU, which the weight gradient reads.
void FnoBlockLayer::backward_input_without_dx(const Tensor& dy, LayerSaved& saved) {
  saved.weight_grad_inputs.clear();
  saved.weight_grad_inputs.push_back(pre_activation_grad(dy, saved));
}

void FnoBlockLayer::backward_without_dx(const Tensor& dy, LayerSaved& saved) {
  backward_input_without_dx(dy, saved);
  backward_weight(dy, saved);
}

}  // namespace sluice::model
