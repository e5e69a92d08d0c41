// patch_embed: a field [C, n1, ..] cut into patches [p1, ..], each projected to one token of D features, plus a
// learned position embedding: tokens [D, T], T = Π n_i/p_i, channel-first (a sample's element (d, t) at d·T + t;
// core/model/transformer_layer.h). The projection is a convolution with kernel = stride = patch through the
// backend's conv ops (timm's PatchEmbed `proj`), so its output is already [D, T] with the tokens in row-major grid
// order. Parameters: proj.weight [D, C, p1, ..], proj.bias [D] (PyTorch's conv defaults) and pos_embed [1, D, T]
// (timm's [1, T, D] transposed to the token layout), initially zeros.
#pragma once

#include "core/model/kernel_parameters.h"
#include "core/model/layer.h"
#include "kernels/backend.h"
#include "kernels/conv_geometry.h"

namespace sluice::model {

class PatchEmbedLayer : public Layer {
 public:
  // `geometry`: the patch convolution (kernel = stride = patch, no padding; core/config/sample_shape.h).
  PatchEmbedLayer(kernels::Backend& backend, const kernels::ConvGeometry& geometry);

  std::string type() const override { return "patch_embed"; }
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
  kernels::ConvGeometry geometry_;
  KernelParameters proj_;
  Parameter pos_embed_;
};

}  // namespace sluice::model
