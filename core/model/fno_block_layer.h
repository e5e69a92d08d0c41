// fno_block: one Fourier layer of the FNO paper's network, y = GELU(spectral_conv(x) + conv1x1(x) + bias) (GELU in
// Sluice's tanh form), on periodic fields of 1, 2 or 3 spatial dimensions. Parameters, named as a PyTorch module
// holding `spectral` (the spectral convolution, core/model/spectral_conv_layer.h) and `pointwise` (nn.ConvNd(in,
// out, 1)) would name them: `spectral.weight` [in, out, 2·m1, .., mk, 2], `pointwise.weight` [out, in, 1, ..] and
// `pointwise.bias` [out]. The 1 × 1 convolution runs through the backend's conv ops.
#pragma once

#include "core/model/layer.h"
#include "kernels/backend.h"
#include "kernels/conv_geometry.h"
#include "kernels/spectral_geometry.h"

namespace sluice::model {

class FnoBlockLayer : public Layer {
 public:
  FnoBlockLayer(kernels::Backend& backend, const kernels::SpectralGeometry& geometry);

  std::string type() const override { return "fno_block"; }
  int64_t in_features() const override { return geometry_.in_features(); }
  int64_t out_features() const override { return geometry_.out_features(); }
  double flops_per_sample() const override;
  std::vector<Parameter*> parameters() override { return {&spectral_, &pointwise_, &bias_}; }
  // spectral.weight as spectral_conv's (stream 0); pointwise.weight (stream 1) and .bias (stream 2) as PyTorch's
  // default for a convolution, uniform in ±1/√in.
  void init(uint64_t seed) override;

  // Keeps x and the sum before the GELU (what GELU's backward differentiates from).
  kernels::Tensor forward(kernels::Tensor x, const ForwardContext& context, LayerSaved& saved) override;
  // Leaves the gradient before the GELU in saved.weight_grad_inputs for backward_weight.
  kernels::Tensor backward_input(const kernels::Tensor& dy, LayerSaved& saved) override;
  void backward_weight(const kernels::Tensor& dy, LayerSaved& saved) override;
  void backward_input_without_dx(const kernels::Tensor& dy, LayerSaved& saved) override;
  void backward_without_dx(const kernels::Tensor& dy, LayerSaved& saved) override;

 private:
  kernels::Tensor pre_activation_grad(const kernels::Tensor& dy, const LayerSaved& saved);

  kernels::Backend& backend_;
  kernels::SpectralGeometry geometry_;
  kernels::ConvGeometry pointwise_geometry_;
  Parameter spectral_, pointwise_, bias_;
};

}  // namespace sluice::model
