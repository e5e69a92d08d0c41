// pool: max or average pooling over fields with stride = kernel and no padding (PyTorch's max_poolNd / avg_poolNd
// with stride = kernel), through the backend's pooling op. No parameters.
#pragma once

#include "core/model/layer.h"
#include "kernels/backend.h"
#include "kernels/conv_geometry.h"

namespace sluice::model {

class PoolLayer : public Layer {
 public:
  PoolLayer(kernels::Backend& backend, const kernels::PoolGeometry& geometry);

  std::string type() const override { return "pool"; }
  int64_t in_features() const override { return geometry_.in_features(); }
  int64_t out_features() const override { return geometry_.out_features(); }
  double flops_per_sample() const override;

  kernels::Tensor forward(kernels::Tensor x, const ForwardContext& context, LayerSaved& saved) override;
  kernels::Tensor backward_input(const kernels::Tensor& dy, LayerSaved& saved) override;

 private:
  kernels::Backend& backend_;
  kernels::PoolGeometry geometry_;
};

}  // namespace sluice::model
