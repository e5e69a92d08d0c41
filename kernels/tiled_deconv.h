// A transposed convolution with stride = kernel (the U-Net's up-convolution) over one block of a split field,
// computed per canonical tile, as kernels/tiled_conv.h does for the convolution and for the same reason: one call
// shape for every tile, so the bits do not depend on the split (docs/DOMAIN.md "Tiles and exact reductions").
// With stride = kernel each input point feeds its own kernel-sized box of the output and nothing else, so no halo:
// a tile of the input gives exactly the tile·kernel box of the output, and dx of the tile needs only that box of dy.
// The parameter gradients are a sum over every point: one partial per tile, added in global tile order
// (kernels/tile_partials.h). Tiles and their numbering are the input's (the output's tile is tile · kernel, the same
// grid of tiles).
#pragma once

#include <vector>

#include "kernels/backend.h"
#include "kernels/tile_grid.h"
#include "kernels/tile_partials.h"

namespace sluice::kernels {

// `deconv` over the WHOLE field (in = grid.global), stride = kernel; `grid` is this block's tiling of the input.
struct TiledDeconv {
  DeconvGeometry deconv;
  TileGrid grid;
};

// Throws Error(kInvalidArgument) "tiled conv_transpose: ..." when the grid fails check_tile_grid, the geometry
// check_deconv_geometry, its input is not grid.global, or a stride is not its kernel (overlapping output boxes
// would need halos and an add order; not tiled).
void check_tiled_deconv(const TiledDeconv& tiled);

// The one call shape of every tile: in = tile.
DeconvGeometry tile_deconv_geometry(const TiledDeconv& tiled);

// The block's output extents: block · kernel per dimension.
std::vector<int64_t> deconv_block_out_extents(const TiledDeconv& tiled);

// x [samples][in_channels · Π block], y [samples][out_channels · Π block·kernel]; bias may be null.
void tiled_deconv_forward(Backend& backend, const TiledDeconv& tiled, const Tensor& x, const Tensor& weight,
                          const Tensor* bias, Tensor& y);
// dx [samples][in_channels · Π block] = dL/dx (overwritten) for dy [samples][out_channels · Π block·kernel].
void tiled_deconv_backward_data(Backend& backend, const TiledDeconv& tiled, const Tensor& dy, const Tensor& weight,
                                Tensor& dx);
// One partial per tile of the block, in the block's tile order, each summed over the samples in sample order.
std::vector<TilePartial> tiled_deconv_param_grad_partials(Backend& backend, const TiledDeconv& tiled, const Tensor& x,
                                                          const Tensor& dy, bool with_bias);

}  // namespace sluice::kernels
