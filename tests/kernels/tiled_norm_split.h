// Test helper for the tiled group norm (kernels/tiled_norm.h) in one process: a global field cut into the blocks of
// a split, each block computed alone, every block's tile sums brought together by global tile index (what the tile
// gather does across ranks), the blocks' y and dx put back into global fields and the per-tile parameter partials
// added in tile order. Host tensors (CPU backend).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/tiled_norm.h"
#include "tests/kernels/split_field.h"

namespace sluice::kernels {

struct NormSplitResult {
  Tensor y, dx, weight_grad, bias_grad;
  // Every tile's sums in global tile order: a double's last bits rarely survive the rounding of the statistics to
  // float, so a test compares these too (the tiles' sums, not the blocks', whatever the split).
  std::vector<double> forward_sums, backward_sums;
};

// `norm` over the whole field (norm.points = Π global); x, dy [samples][channels · Π global]; weight, bias
// [1][channels]; `cuts` the split's block extents per dimension.
inline NormSplitResult run_norm_split(Backend& backend, const NormGeometry& norm, const std::vector<int64_t>& global,
                                      const std::vector<int64_t>& tile,
                                      const std::vector<std::vector<int64_t>>& cuts, const Tensor& x,
                                      const Tensor& dy, const Tensor& weight, const Tensor& bias) {
  const std::vector<Block> blocks = blocks_of(cuts);
  const int64_t samples = x.rows(), channels = norm.channels;
  std::vector<TiledGroupNorm> tiled;
  std::vector<Tensor> xs, dys;
  const std::vector<int64_t> none(global.size(), 0);
  for (const Block& b : blocks) {
    tiled.push_back({norm, TileGrid{global, tile, b.offset, b.extent}});
    xs.push_back(padded_block(x, channels, global, b, none, none));
    dys.push_back(padded_block(dy, channels, global, b, none, none));
  }
  const int64_t per_tile = group_norm_sums_per_tile(tiled[0], samples);
  auto gather = [&](auto&& sums_of) {
    std::vector<double> all(static_cast<size_t>(tiled[0].grid.global_tiles() * per_tile), -1.0);
    for (size_t b = 0; b < blocks.size(); ++b) {
      const std::vector<double> mine = sums_of(b);
      const std::vector<int64_t> tiles = block_tile_indices(tiled[b].grid);
      for (size_t i = 0; i < tiles.size(); ++i) {
        std::copy_n(mine.begin() + static_cast<int64_t>(i) * per_tile, per_tile, all.begin() + tiles[i] * per_tile);
      }
    }
    return all;
  };
  NormSplitResult r{Tensor::host(samples, x.cols()), Tensor::host(samples, x.cols()), Tensor::host(1, channels),
                    Tensor::host(1, channels), {}, {}};
  r.forward_sums = gather([&](size_t b) { return tiled_group_norm_sums(backend, tiled[b], xs[b]); });
  const GroupNormStatistics stats = group_norm_statistics(backend, tiled[0], samples, r.forward_sums);
  r.backward_sums = gather(
      [&](size_t b) { return tiled_group_norm_backward_sums(backend, tiled[b], dys[b], xs[b], weight, stats); });
  std::vector<TilePartial> partials;
  for (size_t b = 0; b < blocks.size(); ++b) {
    Tensor block_y = Tensor::host(samples, xs[b].cols()), block_dx = Tensor::host(samples, xs[b].cols());
    tiled_group_norm_forward(backend, tiled[b], xs[b], weight, bias, stats, block_y);
    tiled_group_norm_backward_data(backend, tiled[b], dys[b], xs[b], weight, stats, r.backward_sums, block_dx);
    place_block(block_y, channels, global, blocks[b], r.y);
    place_block(block_dx, channels, global, blocks[b], r.dx);
    for (TilePartial& p : tiled_group_norm_param_grad_partials(backend, tiled[b], dys[b], xs[b], stats)) {
      partials.push_back(std::move(p));
    }
  }
  add_tile_partials(backend, partials, tiled[0].grid.global_tiles(), r.weight_grad, &r.bias_grad);
  return r;
}

}  // namespace sluice::kernels
