// conv: a 1-, 2- or 3-D convolution over fields, with PyTorch's weight [out, in/groups, k..] and bias [out] and its
// default initial values. Zero padding goes to the library's kernels as implicit padding; periodic and reflect
// padding are copied around each sample's field first (Backend::pad_forward), and the convolution then runs
// unpadded on the padded field, so the kernels stay the library's.
#pragma once

#include <memory>
#include <optional>

#include "core/model/field_domain.h"
#include "core/model/kernel_parameters.h"
#include "core/model/layer.h"
#include "kernels/backend.h"
#include "kernels/conv_geometry.h"

namespace sluice::model {

class ConvLayer : public Layer {
 public:
  // `geometry`: the convolution as the config describes it (complete; its pads are the padding's widths).
  // `explicit_padding`: periodic or reflect padding of those widths, copied before the convolution; without it the
  // pads are zeros. `domain` (the level of the layer's input; it must outlive the layer): run on this rank's block
  // (DomainConvOps: halo fills, per-tile parameter gradients finished by finish_domain_step); the geometry is still
  // the whole field's, and only a stride-1 'same' conv with periodic, zero or reflect padding (or none, for a
  // 1-wide kernel) can.
  ConvLayer(kernels::Backend& backend, const kernels::ConvGeometry& geometry, bool with_bias,
            std::optional<kernels::PadMode> explicit_padding, FieldDomain* domain = nullptr);

  std::string type() const override { return "conv"; }
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
  kernels::ConvGeometry geometry_;  // as configured
  kernels::ConvGeometry computed_;  // what the kernels run: on the padded field, without pads, when padding is explicit
  std::optional<kernels::PadGeometry> pad_;
  KernelParameters params_;
  std::unique_ptr<DomainConvOps> domain_;  // null: the whole field, as without a domain
  int64_t block_points_ = 0;
};

}  // namespace sluice::model
