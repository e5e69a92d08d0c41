// upsample: a field's extents multiplied by integer factors, nearest (each element repeated) or linear (PyTorch's
// interpolate with align_corners=False, edges clamped: linear, bilinear or trilinear by dimension), through the
// backend's resampling op. No parameters.
#pragma once

#include "core/model/layer.h"
#include "kernels/backend.h"
#include "kernels/conv_geometry.h"

namespace sluice::model {

class UpsampleLayer : public Layer {
 public:
  UpsampleLayer(kernels::Backend& backend, const kernels::ResampleGeometry& geometry);

  std::string type() const override { return "upsample"; }
  int64_t in_features() const override { return geometry_.in_features(); }
  int64_t out_features() const override { return geometry_.out_features(); }
  double flops_per_sample() const override;

  kernels::Tensor forward(kernels::Tensor x, const ForwardContext& context, LayerSaved& saved) override;
  kernels::Tensor backward_input(const kernels::Tensor& dy, LayerSaved& saved) override;

 private:
  kernels::Backend& backend_;
  kernels::ResampleGeometry geometry_;
};

}  // namespace sluice::model
