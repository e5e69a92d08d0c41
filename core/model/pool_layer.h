// pool: max or average pooling over fields with stride = kernel and no padding (PyTorch's max_poolNd / avg_poolNd
// with stride = kernel), through the backend's pooling op. No parameters.
#pragma once

#include "core/model/field_domain.h"
#include "core/model/layer.h"
#include "kernels/backend.h"
#include "kernels/conv_geometry.h"

namespace sluice::model {

class PoolLayer : public Layer {
 public:
  // `geometry` over the whole field. `domain` (the level of the layer's input): run on this rank's block, the
  // plain op on the block's extents (each output is its own window's, so the block gives the whole field's bits and
  // sends nothing); every block extent must be a multiple of the kernel.
  PoolLayer(kernels::Backend& backend, const kernels::PoolGeometry& geometry, const FieldDomain* domain = nullptr);

  std::string type() const override { return "pool"; }
  // On a domain: the block's features.
  int64_t in_features() const override { return block_.in_features(); }
  int64_t out_features() const override { return block_.out_features(); }
  double flops_per_sample() const override;

  kernels::Tensor forward(kernels::Tensor x, const ForwardContext& context, LayerSaved& saved) override;
  kernels::Tensor backward_input(const kernels::Tensor& dy, LayerSaved& saved) override;

 private:
  kernels::Backend& backend_;
  kernels::PoolGeometry geometry_;
  kernels::PoolGeometry block_;  // geometry_ on the block's extents (geometry_ without a domain)
};

}  // namespace sluice::model
