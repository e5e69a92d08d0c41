// The loss of a field split into blocks, per canonical tile (kernels/tile_grid.h; docs/DOMAIN.md "Tiles and exact
// reductions"): the backend's loss op on each tile's points alone, one call shape for every tile, and the tiles'
// sums added in global tile order, so the loss is the same bits whatever the split. The gradient is per point and
// goes straight into the block's gradient.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/backend.h"
#include "kernels/tile_grid.h"

namespace sluice::kernels {

enum class FieldLoss {
  kMse,                  // Backend::mse: Σ (pred − target)²
  kChannelCrossEntropy,  // Backend::channel_softmax_cross_entropy over the channels at each point
};

struct TileLoss {
  int64_t tile = 0;    // global tile index
  double value = 0.0;  // the loss op's sum over the tile's samples and points
};

// pred, target and grad are [samples][channels · Π block] (no halo); grad is overwritten with the loss op's gradient
// (grad_scale as the op's). Returns one sum per tile of the block, in the block's tile order.
std::vector<TileLoss> tiled_field_loss(Backend& backend, FieldLoss loss, const TileGrid& grid, int64_t channels,
                                       const Tensor& pred, const Tensor& target, float grad_scale, Tensor& grad);

// Σ tile sums in ascending global tile index, every tile of the field exactly once (Error(kInvalidArgument) naming
// a missing or repeated tile), whatever the order of `tiles` (all blocks' sums, gathered).
double sum_tile_losses(const std::vector<TileLoss>& tiles, int64_t global_tiles);

}  // namespace sluice::kernels
