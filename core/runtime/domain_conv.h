// A stride-1 'same' convolution (periodic, zero or reflect padding) over one rank's block of a domain-split field
// (issue 32; docs/DOMAIN.md "Domain-parallel ops"): the halo exchange (core/comm) composed with the tiled conv
// (kernels/tiled_conv.h), so the block's output, dx and — after the step's gather — the parameter gradients are the undecomposed run's bits.
//
// Messages per pass (the halo channel's and the tile gather's counters report them):
// - pad_input: one halo fill of x, widths pad_low / pad_high (the forward's and the parameter gradients' input);
// - backward_data: one halo fill of dy with the MIRRORED widths (low pad_high, high pad_low), then the gather-form
//   backward per tile: no halo adjoint.
// With zero padding both fills put zeros on the sides at the field's global edges and send nothing across them:
// the padded x is the undecomposed conv's zero-padded input, and dy beyond the field is zero (no output point lies
// there), which is exactly what the gather-form dx of a zero-padded conv reads — the dropped halo gradient.
// With reflect padding the x fill mirrors the block's own points at the global edges (no message there either), dy's
// fill is the zero padding's, and the backward data extends the tiles on the global edges by the reflected points
// and folds their gradients back (kernels::tiled_conv_backward_data_reflect).
//
// - accumulate_param_grads: none (per-tile partials into per-tile accumulators);
// - finish_step: one tile gather of every rank's accumulators, once per step.
#pragma once

#include <string>

#include "core/model/field_domain.h"
#include "core/runtime/domain_field.h"
#include "core/runtime/tile_grad_sum.h"
#include "kernels/backend.h"
#include "kernels/tiled_conv.h"

namespace sluice::runtime {

// The implementation of model::DomainConvOps, the interface the conv layer runs through on a block.
class DomainConv final : public model::DomainConvOps {
 public:
  // `conv`: the layer's convolution over the WHOLE field at the field's level (in = field.grid().global, stride 1,
  // pad_low + pad_high = dilation · (kernel − 1)); refused as check_tiled_conv refuses. `name` names the layer in
  // errors. `edge`: kNeighbour for periodic padding, kZeros for zero padding, kReflect for reflect padding (refused,
  // naming the layer, when a tile is not wider than the halo: check_reflect_tiles). The field must outlive this
  // object.
  DomainConv(kernels::Backend& backend, const DomainField& field, const kernels::ConvGeometry& conv, bool with_bias,
             const std::string& name, comm::HaloSide edge = comm::HaloSide::kNeighbour);

  // x [samples][in_channels · Π block] padded by the forward halo: keep it for accumulate_param_grads (or call
  // again: the same bits, the messages again).
  kernels::Tensor pad_input(const kernels::Tensor& x) const override;
  // y [samples][out_channels · Π block] (allocated here).
  kernels::Tensor forward(const kernels::Tensor& x_padded, const kernels::Tensor& weight,
                          const kernels::Tensor* bias) const override;
  // dx [samples][in_channels · Π block] from dy [samples][out_channels · Π block] (no halo: filled here).
  kernels::Tensor backward_data(const kernels::Tensor& dy, const kernels::Tensor& weight) const override;
  // One micro-batch's parameter-gradient partials, added to this rank's per-tile accumulators.
  void accumulate_param_grads(const kernels::Tensor& x_padded, const kernels::Tensor& dy) override;
  // Collective over the domain group, once per step: weight_grad (and bias_grad) += every tile's accumulated
  // partial in global tile order (TileGradSum).
  void finish_step(kernels::Tensor& weight_grad, kernels::Tensor* bias_grad) override;

  const kernels::TiledConv& tiled() const { return tiled_; }

 private:
  kernels::Backend& backend_;
  const DomainField& field_;
  kernels::TiledConv tiled_;
  bool with_bias_;
  comm::HaloSide edge_;
  TileGradSum grads_;
};

}  // namespace sluice::runtime
