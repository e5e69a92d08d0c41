// upsample: a field's extents multiplied by integer factors, nearest (each element repeated) or linear (PyTorch's
// interpolate with align_corners=False, edges clamped: linear, bilinear or trilinear by dimension), through the
// backend's resampling op. No parameters.
#pragma once

#include <memory>

#include "core/model/field_domain.h"
#include "core/model/layer.h"
#include "kernels/backend.h"
#include "kernels/conv_geometry.h"

namespace sluice::model {

class UpsampleLayer : public Layer {
 public:
  // `geometry` over the whole field. `domain` (the level of the layer's input; it must outlive the layer): run on
  // this rank's block: nearest is the plain op on the block (no message), linear the tiled op with its halos
  // (DomainUpsampleOps).
  UpsampleLayer(kernels::Backend& backend, const kernels::ResampleGeometry& geometry, FieldDomain* domain = nullptr);

  std::string type() const override { return "upsample"; }
  // On a domain: the block's features.
  int64_t in_features() const override { return block_.in_features(); }
  int64_t out_features() const override { return block_.out_features(); }
  double flops_per_sample() const override;

  kernels::Tensor forward(kernels::Tensor x, const ForwardContext& context, LayerSaved& saved) override;
  kernels::Tensor backward_input(const kernels::Tensor& dy, LayerSaved& saved) override;

 private:
  kernels::Backend& backend_;
  kernels::ResampleGeometry geometry_;
  kernels::ResampleGeometry block_;           // geometry_ on the block's extents (geometry_ without a domain)
  std::unique_ptr<DomainUpsampleOps> linear_;  // a linear upsampling on a domain
};

}  // namespace sluice::model
