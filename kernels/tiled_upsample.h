// Upsampling with linear interpolation (PyTorch's align_corners=False, the edges clamped) over one block of a split
// field, per canonical tile of the input (kernels/tile_grid.h; docs/DOMAIN.md "Tiles and exact reductions").
// Why tiles: the plain op computes each output's interpolation weights from its position in the call, so for a
// factor that is not a power of two a block's outputs differ in the last bits from the whole field's even with the
// right halo. Per tile, every call has one shape and each output the same position in it.
//
// Halos: the SAME periodic exchange as the conv's, widths 1 around x (input resolution) and `factor` around dy
// (output resolution). The global edges clamp instead of wrapping; this code does that itself, per tile, from the
// tile's place in the field: it replaces a window's wrapped x halo by the edge points (replicate = clamp), zeroes
// the dy halo beyond the edge (no outputs there), and adds the backward's gradient of a replicated halo back onto
// the edge points (the clamp's adjoint), dimension by dimension in ascending order, low side before high side. So
// the caller needs no non-periodic exchange.
//
// Nearest upsampling needs none of this: each output is a copy of one input, each dx the sum of its own outputs,
// computed alone (tests/kernels:tiled_sampling_test); call the plain op on the block.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/backend.h"
#include "kernels/tile_grid.h"

namespace sluice::kernels {

// `resample` over the WHOLE field (mode linear, in = grid.global); `grid` is this block's tiling of the input.
struct TiledUpsample {
  ResampleGeometry resample;
  TileGrid grid;
};

// Throws Error(kInvalidArgument) "tiled upsample: ..." when the grid fails check_tile_grid, the geometry
// check_resample_geometry, its input is not grid.global, or the mode is not linear.
void check_tiled_upsample(const TiledUpsample& tiled);

// The one call shape of every tile: in = tile + 2 (a halo of one point on each side).
ResampleGeometry tile_upsample_geometry(const TiledUpsample& tiled);

// x_padded's spatial extents (block + 1 + 1, input resolution) and dy_padded's ((block + 2) · factor, output
// resolution: a halo of `factor` points on each side), both periodic halos.
std::vector<int64_t> upsample_forward_padded_extents(const TiledUpsample& tiled);
std::vector<int64_t> upsample_backward_padded_extents(const TiledUpsample& tiled);

// y [samples][channels · Π block·factor] from x_padded [samples][channels · Π forward padded extents].
void tiled_upsample_forward(Backend& backend, const TiledUpsample& tiled, const Tensor& x_padded, Tensor& y);
// dx [samples][channels · Π block] = dL/dx (overwritten) from dy_padded [samples][channels · Π backward padded
// extents].
void tiled_upsample_backward_data(Backend& backend, const TiledUpsample& tiled, const Tensor& dy_padded, Tensor& dx);

}  // namespace sluice::kernels
