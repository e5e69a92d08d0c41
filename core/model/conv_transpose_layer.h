// conv_transpose: a 1-, 2- or 3-D transposed convolution over fields (PyTorch's ConvTransposeNd with groups 1, no
// padding, dilation 1): output extent (n − 1) · stride + kernel, weight [in, out, k..] and bias [out] as PyTorch's,
// and its default initial values. Through the backend's deconvolution ops.
#pragma once

#include <optional>

#include "core/model/kernel_parameters.h"
#include "core/model/layer.h"
#include "kernels/backend.h"
#include "kernels/conv_geometry.h"

namespace sluice::model {

class ConvTransposeLayer : public Layer {
 public:
  ConvTransposeLayer(kernels::Backend& backend, const kernels::DeconvGeometry& geometry, bool with_bias);

  std::string type() const override { return "conv_transpose"; }
  int64_t in_features() const override { return geometry_.in_features(); }
  int64_t out_features() const override { return geometry_.out_features(); }
  double flops_per_sample() const override;
  std::vector<Parameter*> parameters() override;
  void init(uint64_t seed) override;

  kernels::Tensor forward(kernels::Tensor x, const ForwardContext& context, LayerSaved& saved) override;
  kernels::Tensor backward_input(const kernels::Tensor& dy, LayerSaved& saved) override;
  void backward_weight(const kernels::Tensor& dy, LayerSaved& saved) override;
  void backward_input_without_dx(const kernels::Tensor& dy, LayerSaved& saved) override;
  void backward_without_dx(const kernels::Tensor& dy, LayerSaved& saved) override;

 private:
  kernels::Backend& backend_;
  kernels::DeconvGeometry geometry_;
  KernelParameters params_;
};

}  // namespace sluice::model
