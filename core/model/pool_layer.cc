#include "core/model/pool_layer.h"

#include <utility>

#include "core/model/layer_costs.h"

namespace sluice::model {

using kernels::Tensor;

PoolLayer::PoolLayer(kernels::Backend& backend, const kernels::PoolGeometry& geometry)
    : backend_(backend), geometry_(geometry) {
  kernels::check_pool_geometry(geometry_);
}

double PoolLayer::flops_per_sample() const { return pool_flops(geometry_); }

Tensor PoolLayer::forward(Tensor x, const ForwardContext& context, LayerSaved& saved) {
  (void)context;
  Tensor y = backend_.empty(x.rows(), geometry_.out_features());
  backend_.pool_forward(geometry_, x, y);
  saved.tensors.clear();
  // Max pooling's backward finds the maxima in the input again; average pooling's needs nothing.
  if (geometry_.mode == kernels::PoolMode::kMax) saved.tensors.push_back(std::move(x));
  return y;
}

Tensor PoolLayer::backward_input(const Tensor& dy, LayerSaved& saved) {
  Tensor dx = backend_.empty(dy.rows(), geometry_.in_features());
  // Average pooling never reads x: dx stands in for it.
  const Tensor& x = geometry_.mode == kernels::PoolMode::kMax ? saved.tensors[0] : dx;
  backend_.pool_backward(geometry_, x, dy, dx);
  return dx;
}

}  // namespace sluice::model
