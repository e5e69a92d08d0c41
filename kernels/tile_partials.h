// Per-tile parameter-gradient partials and their sum in global tile order (kernels/tile_grid.h): the one order
// that does not depend on how the field is split, so a domain-parallel run's gradient is the undecomposed run's
// bits. A rank computes the partials of its own tiles; the caller brings the partials of all blocks together (any
// order, any rank) and adds them here.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/backend.h"

namespace sluice::kernels {

struct TilePartial {
  int64_t tile = 0;    // global tile index
  Tensor weight_grad;  // this tile's contribution to dL/dweight, the weight's shape
  Tensor bias_grad;    // and to dL/dbias ([1][out]); empty when the layer has no bias
};

// weight_grad += partial.weight_grad, one partial at a time in ascending global tile index whatever the order of
// `partials` (and the same for bias_grad when not null): ((grad + p_0) + p_1) + ... + p_{n-1}. `partials` must
// hold every tile of the field exactly once (global_tiles of them, indices 0 .. global_tiles − 1), else
// Error(kInvalidArgument) naming the missing or repeated tile: a missing block would otherwise go unnoticed.
void add_tile_partials(Backend& backend, const std::vector<TilePartial>& partials, int64_t global_tiles,
                       Tensor& weight_grad, Tensor* bias_grad);

// The per-tile accumulators of a step (docs/DOMAIN.md, order rule 3): for each partial of `micro_batch`, the
// accumulator of the same tile += it (weights and bias), or a copy of it when `accumulators` has none for that tile
// yet. Call once per micro-batch, in micro-batch order, on the rank that holds the tiles; at the end of the step
// add_tile_partials adds the accumulators of all ranks in tile order. Refuses a tile twice in `micro_batch`, or
// shapes that differ from the accumulator's.
void accumulate_tile_partials(Backend& backend, const std::vector<TilePartial>& micro_batch,
                              std::vector<TilePartial>& accumulators);

}  // namespace sluice::kernels
