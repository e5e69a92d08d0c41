#include "core/model/spectral_conv_layer.h"

#include <utility>

#include "core/model/layer_costs.h"

namespace sluice::model {

using kernels::Tensor;

Parameter spectral_weight(kernels::Backend& backend, const kernels::SpectralGeometry& geometry, std::string name) {
  Parameter weight;
  weight.name = std::move(name);
  weight.value = backend.zeros(geometry.in_channels, geometry.weight_cols());
  weight.grad = backend.zeros(geometry.in_channels, geometry.weight_cols());
  weight.shape = {geometry.in_channels, geometry.out_channels};
  for (size_t d = 0; d < geometry.dims(); ++d) weight.shape.push_back(geometry.kept_extent(d));
  weight.shape.push_back(2);
  return weight;
}

void init_spectral_weight(kernels::Backend& backend, const kernels::SpectralGeometry& geometry, uint64_t seed,
                          int layer_index, int parameter, Parameter& weight) {
  const double scale = 1.0 / static_cast<double>(geometry.in_channels * geometry.out_channels);
  backend.fill_uniform(kernels::init_stream(seed, layer_index, parameter), 0.0f, static_cast<float>(scale),
                       weight.value);
}

SpectralConvLayer::SpectralConvLayer(kernels::Backend& backend, const kernels::SpectralGeometry& geometry)
    : backend_(backend), geometry_(geometry) {
  kernels::check_spectral_geometry(geometry_);
  weight_ = spectral_weight(backend, geometry_, "weight");
}

double SpectralConvLayer::flops_per_sample() const { return spectral_flops(geometry_); }

void SpectralConvLayer::init(uint64_t seed) {
  init_spectral_weight(backend_, geometry_, seed, global_index(), 0, weight_);
}

Tensor SpectralConvLayer::forward(Tensor x, const ForwardContext& context, LayerSaved& saved) {
  (void)context;
  Tensor y = backend_.empty(x.rows(), geometry_.out_features());
  backend_.spectral_conv_forward(geometry_, x, weight_.value, y);
  saved.tensors.clear();
  saved.tensors.push_back(std::move(x));  // the weight gradient reads the input's modes
  return y;
}

Tensor SpectralConvLayer::backward_input(const Tensor& dy, LayerSaved& saved) {
  (void)saved;
  Tensor dx = backend_.empty(dy.rows(), geometry_.in_features());
  backend_.spectral_conv_backward_data(geometry_, dy, weight_.value, dx);
  return dx;
}

void SpectralConvLayer::backward_weight(const Tensor& dy, LayerSaved& saved) {
  backend_.spectral_conv_accumulate_weight_grad(geometry_, saved.tensors[0], dy, weight_.grad);
}

// The model's first layer: dL/dx is a transform of every channel that the weight gradient never reads.
void SpectralConvLayer::backward_input_without_dx(const Tensor& dy, LayerSaved& saved) {
  (void)dy;
  (void)saved;
}

void SpectralConvLayer::backward_without_dx(const Tensor& dy, LayerSaved& saved) { backward_weight(dy, saved); }

}  // namespace sluice::model
