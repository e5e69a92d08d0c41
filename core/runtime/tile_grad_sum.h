// A layer's parameter gradient over a domain-split field, by the order rules of docs/DOMAIN.md: one accumulator per
// tile of this rank's block, += each micro-batch's partial of that tile in micro-batch order (rule 3, no message),
// and once per step every rank's accumulators gathered across the domain group (rule 2, one TileGather call) and
// added in global tile order on every rank (rule 1). Every rank of the group ends the step with the same bits, the
// undecomposed run's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/comm/tile_gather.h"
#include "kernels/backend.h"
#include "kernels/tile_partials.h"

namespace sluice::runtime {

class TileGradSum {
 public:
  // `what` names the parameters in errors ("conv1 parameter gradients").
  explicit TileGradSum(std::string what) : what_(std::move(what)) {}

  // One micro-batch's partials of this rank's tiles (kernels' tiled_*_param_grad_partials).
  void accumulate(kernels::Backend& backend, const std::vector<kernels::TilePartial>& micro_batch);

  // Collective over the gather's group, once per step: weight_grad (and bias_grad when not null) += every tile's
  // accumulator of every rank, one tile at a time in ascending global tile index. The accumulators are then
  // cleared. A rank that accumulated nothing this step takes part with no tiles (then the gather refuses: every
  // tile of the field is needed). Host tensors only.
  void finish_step(kernels::Backend& backend, comm::TileGather& gather, int64_t global_tiles,
                   kernels::Tensor& weight_grad, kernels::Tensor* bias_grad);

  size_t held_tiles() const { return accumulators_.size(); }

 private:
  std::string what_;
  std::vector<kernels::TilePartial> accumulators_;
};

}  // namespace sluice::runtime
