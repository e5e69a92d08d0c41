// How a layer runs on one rank's block of a domain-split field (issue 32; docs/DOMAIN.md "Domain-parallel ops"),
// as core/model sees it: an interface, because the halo exchange and the tile gather live in core/comm and the ops
// that compose them with the tiled kernels in core/runtime (core/runtime/block_domain.h implements it), which
// core/model may not include. A layer built with a FieldDomain runs on the block; built without one it runs the
// whole sample exactly as before (same code, same bits, same speed).
//
// The undecomposed reference is the same layers on a FieldDomain of ONE block (the whole field), so a split and the
// one-block run take the same code path and give the same bits.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/backend.h"
#include "kernels/conv_geometry.h"
#include "kernels/tensor.h"
#include "kernels/norm_geometry.h"
#include "kernels/tiled_loss.h"
#include "kernels/tiled_norm.h"

namespace sluice::model {

// A stride-1 'same' convolution (periodic, zero or reflect padding) of one layer on the block (core/runtime's
// DomainConv).
class DomainConvOps {
 public:
  virtual ~DomainConvOps() = default;
  // x padded by the forward halo (a halo fill: messages); the layer stashes it for the parameter gradients.
  virtual kernels::Tensor pad_input(const kernels::Tensor& x) const = 0;
  virtual kernels::Tensor forward(const kernels::Tensor& x_padded, const kernels::Tensor& weight,
                                  const kernels::Tensor* bias) const = 0;
  // dx from dy (a halo fill of dy: messages).
  virtual kernels::Tensor backward_data(const kernels::Tensor& dy, const kernels::Tensor& weight) const = 0;
  // One micro-batch's per-tile partials into this rank's per-tile accumulators (no message). Only a backward
  // calls it, never a (re)computed forward.
  virtual void accumulate_param_grads(const kernels::Tensor& x_padded, const kernels::Tensor& dy) = 0;
  // Collective over the domain group, once per step: grads += every tile's accumulator in global tile order.
  virtual void finish_step(kernels::Tensor& weight_grad, kernels::Tensor* bias_grad) = 0;
};

// A transposed convolution with stride = kernel on the block (core/runtime's DomainDeconv): no halo.
class DomainDeconvOps {
 public:
  virtual ~DomainDeconvOps() = default;
  virtual kernels::Tensor forward(const kernels::Tensor& x, const kernels::Tensor& weight,
                                  const kernels::Tensor* bias) const = 0;
  virtual kernels::Tensor backward_data(const kernels::Tensor& dy, const kernels::Tensor& weight) const = 0;
  virtual void accumulate_param_grads(const kernels::Tensor& x, const kernels::Tensor& dy) = 0;
  virtual void finish_step(kernels::Tensor& weight_grad, kernels::Tensor* bias_grad) = 0;
};

// Linear upsampling on the block (core/runtime's DomainLinearUpsample): halo fills of x and dy.
class DomainUpsampleOps {
 public:
  virtual ~DomainUpsampleOps() = default;
  virtual kernels::Tensor forward(const kernels::Tensor& x) const = 0;
  virtual kernels::Tensor backward_data(const kernels::Tensor& dy) const = 0;
  // forward(x) in two: x padded by its halo (a halo fill: messages), then y from the padded x (no message), so a
  // recompute can reuse the padded x (pipeline.recompute_halos: stash). The same bits as forward(x).
  virtual kernels::Tensor pad_input(const kernels::Tensor& x) const = 0;
  virtual kernels::Tensor forward_padded(const kernels::Tensor& x_padded) const = 0;
};

// Group norm (instance norm: groups = channels) on the block (core/runtime's DomainGroupNorm): the statistics' and
// the backward's sums per canonical tile, gathered across the domain group (messages) and added in tile order; no
// halo. The layer keeps the forward's statistics (in its stash) for the backward passes.
class DomainGroupNormOps {
 public:
  virtual ~DomainGroupNormOps() = default;
  // Collective: y of the block and the field's statistics.
  virtual kernels::Tensor forward(const kernels::Tensor& x, const kernels::Tensor& weight, const kernels::Tensor& bias,
                                  kernels::GroupNormStatistics& stats) const = 0;
  // Collective: dx of the block.
  virtual kernels::Tensor backward_data(const kernels::Tensor& dy, const kernels::Tensor& x,
                                        const kernels::Tensor& weight,
                                        const kernels::GroupNormStatistics& stats) const = 0;
  // Per-tile partials into this rank's accumulators (no message); only a backward calls it.
  virtual void accumulate_param_grads(const kernels::Tensor& dy, const kernels::Tensor& x,
                                      const kernels::GroupNormStatistics& stats) = 0;
  // Collective, once per step: grads += every tile's accumulator in global tile order.
  virtual void finish_step(kernels::Tensor& weight_grad, kernels::Tensor& bias_grad) = 0;
};

// layernorm over the channels at each point on the block (core/runtime's DomainChannelLayerNorm). Its statistics are
// per point, so the layer runs the plain ops on the block for y and dx (no message); only its weight and bias
// gradients, sums over the field, are formed per canonical tile here.
class DomainChannelLayerNormOps {
 public:
  virtual ~DomainChannelLayerNormOps() = default;
  // Per-tile partials into this rank's accumulators (no message); mean and rstd are the block forward's.
  virtual void accumulate_param_grads(const kernels::Tensor& dy, const kernels::Tensor& x, const kernels::Tensor& mean,
                                      const kernels::Tensor& rstd) = 0;
  // Collective, once per step: grads += every tile's accumulator in global tile order.
  virtual void finish_step(kernels::Tensor& weight_grad, kernels::Tensor& bias_grad) = 0;
};

// One rank's block at one resolution level. Levels are owned by the domain they were derived from (at() below) and
// live as long as it does; a layer keeps a reference to its level and the ops it made from it.
class FieldDomain {
 public:
  virtual ~FieldDomain() = default;

  // The whole field's extents at this level, and this rank's block (offset, extent) in it.
  virtual const std::vector<int64_t>& global_extent() const = 0;
  virtual const std::vector<int64_t>& block_offset() const = 0;
  virtual const std::vector<int64_t>& block_extent() const = 0;
  int64_t block_points() const;

  // The level whose extents are this one's divided by `down` per dimension (after pools or strides of that total
  // factor; all 1: this level). Refused (kInvalidArgument) when a block extent or the tile is not divisible.
  virtual FieldDomain& coarsened(const std::vector<int64_t>& down) = 0;
  // The level whose extents are this one's multiplied by `up` per dimension (after an upsampling).
  virtual FieldDomain& refined(const std::vector<int64_t>& up) = 0;

  // `conv` / `deconv` / the upsampling over the WHOLE field at this level; `name` names the layer in errors.
  // `padding`: what the conv's halo is beyond the field's global edges: kPeriodic the wrap, kReflect the block's
  // own points mirrored, none given zeros (no message across those edges but for the wrap).
  virtual std::unique_ptr<DomainConvOps> conv(kernels::Backend& backend, const kernels::ConvGeometry& conv,
                                              bool with_bias, std::optional<kernels::PadMode> padding,
                                              const std::string& name) = 0;
  virtual std::unique_ptr<DomainDeconvOps> deconv(kernels::Backend& backend, const kernels::DeconvGeometry& deconv,
                                                  bool with_bias, const std::string& name) = 0;
  virtual std::unique_ptr<DomainUpsampleOps> linear_upsample(kernels::Backend& backend, int64_t channels,
                                                             const std::vector<int64_t>& factor) = 0;

  // Group norm over the WHOLE field at this level (norm.points = Π global_extent()); `name` names the layer.
  virtual std::unique_ptr<DomainGroupNormOps> group_norm(kernels::Backend& backend, const kernels::NormGeometry& norm,
                                                         const std::string& name) = 0;

  // layernorm over the channels of the WHOLE field at this level (norm.points = Π global_extent()).
  virtual std::unique_ptr<DomainChannelLayerNormOps> channel_layernorm(kernels::Backend& backend,
                                                                       const kernels::NormGeometry& norm,
                                                                       const std::string& name) = 0;

  // Collective over the domain group: the loss op on this block's tiles, the tiles' sums gathered and added in
  // global tile order (the same double on every rank); `grad` [samples][channels · Π block] is overwritten.
  virtual double field_loss(kernels::Backend& backend, kernels::FieldLoss loss, int64_t channels,
                            const kernels::Tensor& pred, const kernels::Tensor& target, float grad_scale,
                            kernels::Tensor& grad, const std::string& what) = 0;
};

// Error(kInvalidArgument) naming `layer` unless `global` (a layer's whole-field extents) is the level's.
void check_domain_level(const FieldDomain& domain, const std::vector<int64_t>& global, const std::string& layer);

}  // namespace sluice::model
