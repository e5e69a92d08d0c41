// Group norm (and instance norm: groups = channels) over a field split into blocks, its statistics formed per
// canonical tile (kernels/tile_grid.h; docs/DOMAIN.md "Tiles and exact reductions"): each tile's sums by one backend
// call on the tile's points alone, the sums of every tile of the field added in global tile order, then the
// normalization and dx applied to the block with the totals. A block's results are the same bits whatever the split.
//
// Numerics: per tile, per sample and group, the sum of x and the sum of squared deviations from the TILE's own mean
// (m2), both in double; the field's mean = Σ sum_t / N and its variance = Σ (m2_t + n_t · (sum_t / n_t − mean)²) / N
// over the tiles in order (the exact split of Σ (x − mean)² into within- and between-tile parts), so no sum of
// squares minus a squared mean loses the variance to cancellation. rstd = 1 / √(var + eps), mean and rstd rounded
// to float once, as Backend::group_norm_forward's. The backward's Σ g and Σ g · x̂ (g = dy · weight) are tile sums
// in double added in tile order. Results differ from Backend::group_norm_forward's (a whole sample's sums in one
// order) only by rounding.
//
// The caller brings the tiles' sums of all blocks together (core/runtime/domain_norm.h: one TileGather per pass);
// a single block holding the whole field is the undecomposed run.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/backend.h"
#include "kernels/tile_grid.h"
#include "kernels/tile_partials.h"

namespace sluice::kernels {

struct TiledGroupNorm {
  NormGeometry norm;  // over the whole field at this level: norm.points = Π grid.global
  TileGrid grid;      // this block and its tiles
};

// Error(kInvalidArgument) "tiled group norm: ..." when the geometry or grid is not one (check_norm_geometry,
// check_tile_grid) or norm.points is not the grid's global points.
void check_tiled_group_norm(const TiledGroupNorm& tiled);

// Values per tile in the sums below: samples · groups · 2.
int64_t group_norm_sums_per_tile(const TiledGroupNorm& tiled, int64_t samples);

// The block's tiles' global indices, in the block's tile order (the order of the sums below).
std::vector<int64_t> block_tile_indices(const TileGrid& grid);

// Per tile of the block, in block tile order: Backend::group_norm_partial_sums of the tile's x ([samples][groups]
// [sum, m2]). x is [samples][channels · Π block].
std::vector<double> tiled_group_norm_sums(Backend& backend, const TiledGroupNorm& tiled, const Tensor& x);

struct GroupNormStatistics {
  Tensor mean;  // [samples][groups]
  Tensor rstd;
};

// The field's statistics from every tile's sums, `all` = [global tiles][group_norm_sums_per_tile] in global tile
// order (TileGather::all_tiles's result), added tile by tile in that order. Tensors on `backend`.
GroupNormStatistics group_norm_statistics(Backend& backend, const TiledGroupNorm& tiled, int64_t samples,
                                          const std::vector<double>& all);

// y = the block normalized with the field's statistics (Backend::group_norm_normalize on the block).
void tiled_group_norm_forward(Backend& backend, const TiledGroupNorm& tiled, const Tensor& x, const Tensor& weight,
                              const Tensor& bias, const GroupNormStatistics& stats, Tensor& y);

// Per tile of the block, in block tile order: Backend::group_norm_backward_partial_sums ([samples][groups]
// [Σ g, Σ g · x̂]).
std::vector<double> tiled_group_norm_backward_sums(Backend& backend, const TiledGroupNorm& tiled, const Tensor& dy,
                                                   const Tensor& x, const Tensor& weight,
                                                   const GroupNormStatistics& stats);

// dx of the block from every tile's backward sums (`all` in global tile order, added in that order; the means are
// the totals / N, rounded to float once).
void tiled_group_norm_backward_data(Backend& backend, const TiledGroupNorm& tiled, const Tensor& dy, const Tensor& x,
                                    const Tensor& weight, const GroupNormStatistics& stats,
                                    const std::vector<double>& all, Tensor& dx);

// Per tile of the block: weight_grad[c] = Σ dy · x̂, bias_grad[c] = Σ dy over the tile's samples and points
// (Backend::group_norm_accumulate_param_grads of the tile into zeros), for add_tile_partials.
std::vector<TilePartial> tiled_group_norm_param_grad_partials(Backend& backend, const TiledGroupNorm& tiled,
                                                              const Tensor& dy, const Tensor& x,
                                                              const GroupNormStatistics& stats);

// layernorm over the channels at each point (Backend::channel_layernorm_*) on a block: its statistics are per point,
// so the plain ops on the block give the whole field's y and dx; its weight and bias gradients are sums over the
// field, formed here per tile: Backend::channel_layernorm_accumulate_param_grads of the tile's dy, x, mean and rstd
// (mean and rstd [samples][Π block], the block forward's) into zeros, for add_tile_partials. `tiled.norm` is the
// whole field's (its groups unused); checked as check_tiled_group_norm checks.
std::vector<TilePartial> tiled_channel_layernorm_param_grad_partials(Backend& backend, const TiledGroupNorm& tiled,
                                                                     const Tensor& dy, const Tensor& x,
                                                                     const Tensor& mean, const Tensor& rstd);

}  // namespace sluice::kernels
