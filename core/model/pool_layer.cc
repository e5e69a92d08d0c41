#include "core/model/pool_layer.h"

#include <utility>

#include "core/model/layer_costs.h"

namespace sluice::model {

using kernels::Tensor;

PoolLayer::PoolLayer(kernels::Backend& backend, const kernels::PoolGeometry& geometry, const FieldDomain* domain)
    : backend_(backend), geometry_(geometry), block_(geometry) {
  kernels::check_pool_geometry(geometry_);
  if (domain != nullptr) {
    check_domain_level(*domain, geometry_.in, "pool layer");
    block_.in = domain->block_extent();
    kernels::check_pool_geometry(block_);
  }
}

double PoolLayer::flops_per_sample() const { return pool_flops(geometry_); }

Tensor PoolLayer::forward(Tensor x, const ForwardContext& context, LayerSaved& saved) {
  (void)context;
  Tensor y = backend_.empty(x.rows(), block_.out_features());
  backend_.pool_forward(block_, x, y);
  saved.tensors.clear();
  // Max pooling's backward finds the maxima in the input again; average pooling's needs nothing.
  if (block_.mode == kernels::PoolMode::kMax) saved.tensors.push_back(std::move(x));
  return y;
}

Tensor PoolLayer::backward_input(const Tensor& dy, LayerSaved& saved) {
  Tensor dx = backend_.empty(dy.rows(), block_.in_features());
  // Average pooling never reads x: dx stands in for it.
  const Tensor& x = block_.mode == kernels::PoolMode::kMax ? saved.tensors[0] : dx;
  backend_.pool_backward(block_, x, dy, dx);
  return dx;
}

}  // namespace sluice::model
