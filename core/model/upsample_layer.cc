#include "core/model/upsample_layer.h"

#include "core/model/layer_costs.h"

namespace sluice::model {

using kernels::Tensor;

UpsampleLayer::UpsampleLayer(kernels::Backend& backend, const kernels::ResampleGeometry& geometry,
                             FieldDomain* domain)
    : backend_(backend), geometry_(geometry), block_(geometry) {
  kernels::check_resample_geometry(geometry_);
  if (domain == nullptr) return;
  check_domain_level(*domain, geometry_.in, "upsample layer");
  block_.in = domain->block_extent();
  kernels::check_resample_geometry(block_);
  if (geometry_.mode == kernels::ResampleMode::kLinear) {
    linear_ = domain->linear_upsample(backend, geometry_.channels, geometry_.factor);
  }
}

double UpsampleLayer::flops_per_sample() const { return resample_flops(geometry_); }

Tensor UpsampleLayer::forward(Tensor x, const ForwardContext& context, LayerSaved& saved) {
  (void)context;
  saved.tensors.clear();  // the backward is linear in dy alone
  if (linear_) {
    // The halo fill, unless a recompute was handed the first forward's (pipeline.recompute_halos: stash); kept
    // only for a caller that will hand it back: the backward does not read it.
    Tensor padded = saved.take_halo_input();
    if (padded.empty()) padded = linear_->pad_input(x);
    Tensor y = linear_->forward_padded(padded);
    if (saved.keep_halos) saved.halo_input = std::move(padded);
    return y;
  }
  Tensor y = backend_.empty(x.rows(), block_.out_features());
  backend_.resample_forward(block_, x, y);
  return y;
}

Tensor UpsampleLayer::backward_input(const Tensor& dy, LayerSaved& saved) {
  (void)saved;
  if (linear_) return linear_->backward_data(dy);
  Tensor dx = backend_.empty(dy.rows(), block_.in_features());
  backend_.resample_backward(block_, dy, dx);
  return dx;
}

}  // namespace sluice::model
