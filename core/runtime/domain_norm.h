// Group norm (and instance norm: groups = channels) over one rank's block of a domain-split field (issue 32;
// docs/DOMAIN.md "Domain-parallel ops"): the statistics' sums per canonical tile (kernels/tiled_norm.h), gathered
// across the domain group and added in global tile order on every rank, so the block's y, dx and — after the
// step's gather — the parameter gradients are the undecomposed run's bits. No halo: every point needs only the
// statistics.
//
// Messages per pass (the tile gather's counters report them):
// - forward: one tile gather of samples · groups · 2 doubles per tile (each tile's sum and its deviations' squares);
// - backward_data: one tile gather of samples · groups · 2 doubles per tile (Σ dy · weight and Σ dy · weight · x̂);
// - accumulate_param_grads: none (per-tile partials into per-tile accumulators);
// - finish_step: one tile gather of every rank's accumulators (weight and bias), once per step.
//
// layernorm over the channels at each point (DomainChannelLayerNorm) needs no message for y and dx (its statistics
// are per point: the layer runs the plain ops on the block); its parameter gradients are per-tile partials finished
// like group norm's, one tile gather per step.
#pragma once

#include <string>

#include "core/model/field_domain.h"
#include "core/runtime/domain_field.h"
#include "core/runtime/tile_grad_sum.h"
#include "kernels/backend.h"
#include "kernels/tiled_norm.h"

namespace sluice::runtime {

class DomainGroupNorm : public model::DomainGroupNormOps {
 public:
  // `norm`: the layer's group norm over the WHOLE field at the field's level (norm.points = Π field.grid().global);
  // refused as check_tiled_group_norm refuses. `name` names the layer in errors. The field must outlive this object.
  DomainGroupNorm(kernels::Backend& backend, const DomainField& field, const kernels::NormGeometry& norm,
                  const std::string& name);

  // Collective over the domain group. y [samples][channels · Π block] (allocated here) and the field's statistics
  // (keep them for the backward passes, as the layer keeps mean and rstd).
  kernels::Tensor forward(const kernels::Tensor& x, const kernels::Tensor& weight, const kernels::Tensor& bias,
                          kernels::GroupNormStatistics& stats) const override;
  // Collective over the domain group. dx [samples][channels · Π block] (allocated here).
  kernels::Tensor backward_data(const kernels::Tensor& dy, const kernels::Tensor& x, const kernels::Tensor& weight,
                                const kernels::GroupNormStatistics& stats) const override;
  // One micro-batch's parameter-gradient partials, added to this rank's per-tile accumulators.
  void accumulate_param_grads(const kernels::Tensor& dy, const kernels::Tensor& x,
                              const kernels::GroupNormStatistics& stats) override;
  // Collective over the domain group, once per step: weight_grad and bias_grad += every tile's accumulated partial
  // in global tile order (TileGradSum).
  void finish_step(kernels::Tensor& weight_grad, kernels::Tensor& bias_grad) override;

  const kernels::TiledGroupNorm& tiled() const { return tiled_; }

 private:
  // Every tile's sums, this rank's `mine` gathered across the group (host doubles; no device tensor is read).
  std::vector<double> gathered(const std::vector<double>& mine, int64_t samples, const std::string& what) const;

  kernels::Backend& backend_;
  const DomainField& field_;
  kernels::TiledGroupNorm tiled_;
  std::string name_;
  TileGradSum grads_;
};

class DomainChannelLayerNorm : public model::DomainChannelLayerNormOps {
 public:
  // `norm`: the layer's over the WHOLE field at the field's level (norm.points = Π field.grid().global). The field
  // must outlive this object.
  DomainChannelLayerNorm(kernels::Backend& backend, const DomainField& field, const kernels::NormGeometry& norm,
                         const std::string& name);

  // One micro-batch's partials (mean and rstd [samples][Π block], the block forward's), added to this rank's
  // per-tile accumulators.
  void accumulate_param_grads(const kernels::Tensor& dy, const kernels::Tensor& x, const kernels::Tensor& mean,
                              const kernels::Tensor& rstd) override;
  // Collective over the domain group, once per step (TileGradSum).
  void finish_step(kernels::Tensor& weight_grad, kernels::Tensor& bias_grad) override;

 private:
  kernels::Backend& backend_;
  const DomainField& field_;
  kernels::TiledGroupNorm tiled_;
  TileGradSum grads_;
};

}  // namespace sluice::runtime
