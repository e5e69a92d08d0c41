// A transposed convolution with stride = kernel (the U-Net's up-convolution) over one rank's block of a
// domain-split field (docs/DOMAIN.md "Domain-parallel ops"): the tiled op (kernels/tiled_deconv.h) needs no halo,
// as each input point feeds its own output box, so forward and backward data send nothing; the parameter
// gradients are per-tile partials accumulated over the step's micro-batches and gathered once per step, like the
// conv's (TileGradSum). The output block is the input block refined by the kernel (DomainField::refined).
#pragma once

#include <string>

#include "core/model/field_domain.h"
#include "core/runtime/domain_field.h"
#include "core/runtime/tile_grad_sum.h"
#include "kernels/backend.h"
#include "kernels/tiled_deconv.h"

namespace sluice::runtime {

// The implementation of model::DomainDeconvOps (the conv_transpose layer on a block).
class DomainDeconv final : public model::DomainDeconvOps {
 public:
  // `deconv` over the WHOLE field at the input's level (in = field.grid().global, stride = kernel); refused as
  // check_tiled_deconv refuses. The field must outlive this object.
  DomainDeconv(kernels::Backend& backend, const DomainField& field, const kernels::DeconvGeometry& deconv,
               bool with_bias, const std::string& name);

  // y [samples][out_channels · Π block · kernel] from x [samples][in_channels · Π block].
  kernels::Tensor forward(const kernels::Tensor& x, const kernels::Tensor& weight,
                          const kernels::Tensor* bias) const override;
  kernels::Tensor backward_data(const kernels::Tensor& dy, const kernels::Tensor& weight) const override;
  void accumulate_param_grads(const kernels::Tensor& x, const kernels::Tensor& dy) override;
  // Collective over the domain group, once per step (TileGradSum::finish_step).
  void finish_step(kernels::Tensor& weight_grad, kernels::Tensor* bias_grad) override;

 private:
  kernels::Backend& backend_;
  const DomainField& field_;
  kernels::TiledDeconv tiled_;
  bool with_bias_;
  TileGradSum grads_;
};

}  // namespace sluice::runtime
