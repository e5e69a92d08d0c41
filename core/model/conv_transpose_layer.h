// conv_transpose: a 1-, 2- or 3-D transposed convolution over fields (PyTorch's ConvTransposeNd with groups 1, no
// padding, dilation 1): output extent (n − 1) · stride + kernel, weight [in, out, k..] and bias [out] as PyTorch's,
// and its default initial values. Through the backend's deconvolution ops.
#pragma once

#include <memory>
#include <optional>

#include "core/model/field_domain.h"
#include "core/model/kernel_parameters.h"
#include "core/model/layer.h"
#include "kernels/backend.h"
#include "kernels/conv_geometry.h"

namespace sluice::model {

class ConvTransposeLayer : public Layer {
 public:
  // `geometry` over the whole field. `domain` (the level of the layer's input; it must outlive the layer): run on
  // this rank's block (DomainDeconvOps: no halo; per-tile parameter gradients finished by finish_domain_step);
  // only stride = kernel can.
  ConvTransposeLayer(kernels::Backend& backend, const kernels::DeconvGeometry& geometry, bool with_bias,
                     FieldDomain* domain = nullptr);

  std::string type() const override { return "conv_transpose"; }
  // On a domain: the block's features.
  int64_t in_features() const override;
  int64_t out_features() const override;
  double flops_per_sample() const override;
  std::vector<Parameter*> parameters() override;
  void init(uint64_t seed) override;

  kernels::Tensor forward(kernels::Tensor x, const ForwardContext& context, LayerSaved& saved) override;
  kernels::Tensor backward_input(const kernels::Tensor& dy, LayerSaved& saved) override;
  void backward_weight(const kernels::Tensor& dy, LayerSaved& saved) override;
  void backward_input_without_dx(const kernels::Tensor& dy, LayerSaved& saved) override;
  void backward_without_dx(const kernels::Tensor& dy, LayerSaved& saved) override;
  void finish_domain_step() override;

 private:
  kernels::Backend& backend_;
  kernels::DeconvGeometry geometry_;
  KernelParameters params_;
  std::unique_ptr<DomainDeconvOps> domain_;  // null: the whole field, as without a domain
  int64_t block_points_ = 0;                 // of the input's block
};

}  // namespace sluice::model
