// A stride-1 'same' convolution over one block of a field padded periodically, with zeros or by reflection,
// computed per canonical tile (kernels/tile_grid.h) so that its results are the same bits whatever the split
// (issue 32, "exactness by construction"; docs/DOMAIN.md "Tiles and exact reductions"). On any backend with conv and copy_columns ops (CPU
// and CUDA): no arithmetic here but the backend's own ops.
//
// Why per tile: a library call's result at a point may depend on the extent it is called on (blocking, kernel
// choice by shape: cuDNN's heuristics see the whole problem). Per tile, every call has one shape, the same on every
// rank and in the undecomposed run, and reads the same values, so it returns the same bits; the split only decides
// which rank makes which calls.
//
// The three passes and what each needs (lo/hi = the conv's pad_low/pad_high, eff = lo + hi = dilation·(kernel − 1)):
// - forward: x padded by the forward halo, low lo and high hi per dimension (the halo exchange's periodic wrap, or
//   zeros at the field's global edges);
//   per tile, the window tile + halo -> a 'valid' conv -> the tile's output. Each output point is computed once.
// - backward data, in GATHER form: dy padded by the MIRRORED halo, low hi and high lo (the same exchange as the
//   forward's, on dy with the widths swapped; zeros beyond a zero-padded field's edges, where no output lies);
//   per tile, dx over the tile alone from the dy window
//   tile − hi .. tile + lo, in one conv_backward_data whose implicit padding is eff on both sides. Each dx point is
//   computed once, by one call, from every dy that reaches it: no overlapping windows are added, so there is no
//   add order to fix and no halo adjoint (no send-and-add of halo gradients) for a conv at all.
// - parameter gradients: per tile, the 'valid' conv's weight/bias gradient from the tile's forward window of x and
//   the tile's dy, into a zeroed partial, one per tile (kernels/tile_partials.h adds them in global tile order).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/backend.h"
#include "kernels/tile_grid.h"
#include "kernels/tile_partials.h"

namespace sluice::kernels {

// `conv` is the layer's convolution over the WHOLE field: channels, groups, kernel, dilation, pad_low/pad_high
// (the halo widths: any split of dilation·(kernel − 1), e.g. same_pad_low/high), stride 1, `in` = grid.global;
// `out` is filled by complete_conv_geometry. `grid` is this block's tiling.
struct TiledConv {
  ConvGeometry conv;
  TileGrid grid;
};

// Throws Error(kInvalidArgument) "tiled conv: ..." when the pair is not usable: the grid fails check_tile_grid, the
// conv is not a complete geometry over grid.global, its stride is not 1, or its padding does not keep the extent.
// (How wide a halo may be against the blocks is the halo exchange's to check.)
void check_tiled_conv(const TiledConv& tiled);

// The one call shape of every tile: the forward's 'valid' conv (in = tile + lo + hi, no padding, out = tile) and
// the backward data's gather conv (in = tile, padding eff on both sides, out = tile + eff).
ConvGeometry tile_forward_geometry(const TiledConv& tiled);
ConvGeometry tile_backward_geometry(const TiledConv& tiled);

// Spatial extents of the padded block each pass reads: block + lo + hi (x for the forward and the parameter
// gradients) and block + hi + lo with the low side hi (dy for the backward data).
std::vector<int64_t> forward_padded_extents(const TiledConv& tiled);
std::vector<int64_t> backward_padded_extents(const TiledConv& tiled);

// y [samples][out_channels · Π block] = the conv of the block; x_padded [samples][in_channels · Π forward padded
// extents]. bias may be null.
void tiled_conv_forward(Backend& backend, const TiledConv& tiled, const Tensor& x_padded, const Tensor& weight,
                        const Tensor* bias, Tensor& y);

// dx [samples][in_channels · Π block] = dL/dx of the block (overwritten); dy_padded [samples][out_channels · Π
// backward padded extents] = dL/dy with the mirrored halo (low hi, high lo), periodic across the global edges (zeros
// there for a zero-padded conv).
void tiled_conv_backward_data(Backend& backend, const TiledConv& tiled, const Tensor& dy_padded, const Tensor& weight,
                              Tensor& dx);

// Reflect padding at the field's global edges (x's halo there the block's own points mirrored, PyTorch's reflect):
// dx as tiled_conv_backward_data's, from dy_padded with ZEROS beyond the global edges (no output lies there), but
// each tile that touches a global edge is computed over the tile extended by the forward halo beyond that edge (lo
// below, hi above: the reflected points' gradients, from a dy window that is zero beyond the field), and those
// gradients are added onto their mirrors inside the tile: dimension by dimension, the last first, per dimension
// the low side then the high, m ascending. Every call per tile, so the same bits whatever the split.
void tiled_conv_backward_data_reflect(Backend& backend, const TiledConv& tiled, const Tensor& dy_padded,
                                      const Tensor& weight, Tensor& dx);
// Error(kInvalidArgument) naming `name`, the dimension, tile and halo unless every tile is wider than the halo (a
// mirror must stay in its tile).
void check_reflect_tiles(const TiledConv& tiled, const std::string& name);

// One partial per tile of the block, in the block's tile order (ascending global index), each the tile's
// contribution summed over the samples in sample order (conv_accumulate_param_grads). x_padded as the forward's;
// dy [samples][out_channels · Π block] without halo. bias_grad partials only when with_bias.
std::vector<TilePartial> tiled_conv_param_grad_partials(Backend& backend, const TiledConv& tiled,
                                                        const Tensor& x_padded, const Tensor& dy, bool with_bias);

}  // namespace sluice::kernels
