#include "core/model/upsample_layer.h"

#include "core/model/layer_costs.h"

namespace sluice::model {

using kernels::Tensor;

UpsampleLayer::UpsampleLayer(kernels::Backend& backend, const kernels::ResampleGeometry& geometry)
    : backend_(backend), geometry_(geometry) {
  kernels::check_resample_geometry(geometry_);
}

double UpsampleLayer::flops_per_sample() const { return resample_flops(geometry_); }

Tensor UpsampleLayer::forward(Tensor x, const ForwardContext& context, LayerSaved& saved) {
  (void)context;
  Tensor y = backend_.empty(x.rows(), geometry_.out_features());
  backend_.resample_forward(geometry_, x, y);
  saved.tensors.clear();  // the backward is linear in dy alone
  return y;
}

Tensor UpsampleLayer::backward_input(const Tensor& dy, LayerSaved& saved) {
  (void)saved;
  Tensor dx = backend_.empty(dy.rows(), geometry_.in_features());
  backend_.resample_backward(geometry_, dy, dx);
  return dx;
}

}  // namespace sluice::model
