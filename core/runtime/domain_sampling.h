// Pooling and upsampling over one rank's block of a domain-split field (docs/DOMAIN.md "Domain-parallel ops").
// Pooling (stride = kernel) and nearest upsampling need no halo and no tiles: each output is its own window's max,
// mean or copy (each dx its own window's), so the plain op on the block gives the whole field's bits; they send
// nothing. Linear upsampling is tiled (kernels/tiled_upsample.h): one halo fill of x (width 1) forward and one of
// dy (width `factor`, at the output's level) backward, the global edges clamped by the tiled op itself.
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/field_domain.h"
#include "core/runtime/domain_field.h"
#include "kernels/backend.h"
#include "kernels/conv_geometry.h"
#include "kernels/tiled_upsample.h"

namespace sluice::runtime {

// The pool / nearest resample of this rank's block: `mode`, `channels`, `kernel` or `factor` as the layer's, `in`
// the block's extents. Refused (kInvalidArgument, check_pool_geometry) when a kernel does not divide the block.
kernels::PoolGeometry block_pool_geometry(const DomainField& field, kernels::PoolMode mode, int64_t channels,
                                          const std::vector<int64_t>& kernel);
kernels::ResampleGeometry block_nearest_geometry(const DomainField& field, int64_t channels,
                                                 const std::vector<int64_t>& factor);

// The implementation of model::DomainUpsampleOps (the linear upsample layer on a block).
class DomainLinearUpsample final : public model::DomainUpsampleOps {
 public:
  // `factor` per dimension; the field is the input's level (the output's is field.refined(factor)). The field
  // must outlive this object.
  DomainLinearUpsample(kernels::Backend& backend, const DomainField& field, int64_t channels,
                       const std::vector<int64_t>& factor);
  // y [samples][channels · Π block · factor] from x [samples][channels · Π block] (one halo fill of x).
  kernels::Tensor forward(const kernels::Tensor& x) const override;
  // x padded by 1 point per side (the one halo fill of forward), and y from it.
  kernels::Tensor pad_input(const kernels::Tensor& x) const override;
  kernels::Tensor forward_padded(const kernels::Tensor& x_padded) const override;
  // dx [samples][channels · Π block] from dy at the output's level (one halo fill of dy).
  kernels::Tensor backward_data(const kernels::Tensor& dy) const override;

 private:
  kernels::Backend& backend_;
  const DomainField& field_;
  DomainField out_field_;
  kernels::TiledUpsample tiled_;
};

}  // namespace sluice::runtime
