// The loss of a domain-split field (docs/DOMAIN.md "Domain-parallel ops"): the tiled loss (kernels/tiled_loss.h)
// on this rank's block, the tiles' sums (one double each) gathered across the domain group (one TileGather call)
// and added in global tile order on every rank, so every rank returns the same value, the undecomposed run's.
// The gradient is per point and stays in the block.
#pragma once

#include <cstdint>
#include <string>

#include "core/runtime/domain_field.h"
#include "kernels/backend.h"
#include "kernels/tiled_loss.h"

namespace sluice::runtime {

// Collective over the field's domain group. pred, target and grad are [samples][channels · Π block]; grad is
// allocated by the caller and overwritten with the loss op's gradient (grad_scale as the op's). `what` names the
// loss in errors. Returns Σ tile sums in tile order.
double domain_field_loss(kernels::Backend& backend, const DomainField& field, kernels::FieldLoss loss,
                         int64_t channels, const kernels::Tensor& pred, const kernels::Tensor& target,
                         float grad_scale, kernels::Tensor& grad, const std::string& what);

}  // namespace sluice::runtime
