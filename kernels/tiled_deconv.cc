#include "kernels/tiled_deconv.h"

#include <string>
#include <utility>

#include "core/common/error.h"
#include "kernels/field_box.h"

namespace sluice::kernels {
namespace {

[[noreturn]] void fail(const std::string& problem) {
  throw Error(ErrorCode::kInvalidArgument, "tiled conv_transpose: " + problem);
}

void require_cols(const char* op, const char* operand, const Tensor& tensor, int64_t rows, int64_t cols) {
  if (tensor.rows() != rows || tensor.cols() != cols) {
    fail(std::string(op) + ": " + operand + " is [" + std::to_string(tensor.rows()) + "][" +
         std::to_string(tensor.cols()) + "], expected [" + std::to_string(rows) + "][" + std::to_string(cols) + "]");
  }
}

std::vector<int64_t> times_kernel(const TiledDeconv& t, std::vector<int64_t> values) {
  for (size_t d = 0; d < values.size(); ++d) values[d] *= t.deconv.kernel[d];
  return values;
}

// Where the block's `local`-th tile and its output box start, in the block's input and output.
struct TilePlace {
  std::vector<int64_t> in_origin;
  std::vector<int64_t> out_origin;
};

TilePlace place_of(const TiledDeconv& t, int64_t local) {
  TilePlace place;
  place.in_origin = t.grid.tile_origin(local);
  place.out_origin = times_kernel(t, place.in_origin);
  return place;
}

}  // namespace

void check_tiled_deconv(const TiledDeconv& t) {
  check_tile_grid(t.grid);
  check_deconv_geometry(t.deconv);
  if (t.deconv.in != t.grid.global) fail("the input extents are not the grid's global extents");
  for (size_t d = 0; d < t.deconv.in.size(); ++d) {
    if (t.deconv.stride[d] != t.deconv.kernel[d]) {
      fail("stride " + std::to_string(t.deconv.stride[d]) + " in dimension " + std::to_string(d) +
           " is not the kernel " + std::to_string(t.deconv.kernel[d]) +
           "; only non-overlapping output boxes (stride = kernel) are tiled");
    }
  }
}

DeconvGeometry tile_deconv_geometry(const TiledDeconv& t) {
  DeconvGeometry g = t.deconv;
  g.in = t.grid.tile;
  return g;
}

std::vector<int64_t> deconv_block_out_extents(const TiledDeconv& t) { return times_kernel(t, t.grid.block_extent); }

void tiled_deconv_forward(Backend& backend, const TiledDeconv& t, const Tensor& x, const Tensor& weight,
                          const Tensor* bias, Tensor& y) {
  check_tiled_deconv(t);
  const DeconvGeometry g = tile_deconv_geometry(t);
  const std::vector<int64_t> block_out = deconv_block_out_extents(t);
  const int64_t samples = x.rows();
  require_cols("forward", "x", x, samples, g.in_channels * t.grid.block_points());
  require_cols("forward", "y", y, samples, g.out_channels * extent_product(block_out));
  Tensor tile_x = backend.empty(samples, g.in_features());
  Tensor tile_y = backend.empty(samples, g.out_features());
  for (int64_t local = 0; local < t.grid.block_tiles(); ++local) {
    const TilePlace p = place_of(t, local);
    copy_field_box(backend, box_out_of(g.in_channels, t.grid.block_extent, p.in_origin, g.in), x, tile_x);
    backend.deconv_forward(g, tile_x, weight, bias, tile_y);
    copy_field_box(backend, box_into(g.out_channels, block_out, p.out_origin, g.out()), tile_y, y);
  }
}

void tiled_deconv_backward_data(Backend& backend, const TiledDeconv& t, const Tensor& dy, const Tensor& weight,
                                Tensor& dx) {
  check_tiled_deconv(t);
  const DeconvGeometry g = tile_deconv_geometry(t);
  const std::vector<int64_t> block_out = deconv_block_out_extents(t);
  const int64_t samples = dy.rows();
  require_cols("backward data", "dy", dy, samples, g.out_channels * extent_product(block_out));
  require_cols("backward data", "dx", dx, samples, g.in_channels * t.grid.block_points());
  Tensor tile_dy = backend.empty(samples, g.out_features());
  Tensor tile_dx = backend.empty(samples, g.in_features());
  for (int64_t local = 0; local < t.grid.block_tiles(); ++local) {
    const TilePlace p = place_of(t, local);
    copy_field_box(backend, box_out_of(g.out_channels, block_out, p.out_origin, g.out()), dy, tile_dy);
    backend.deconv_backward_data(g, tile_dy, weight, tile_dx);
    copy_field_box(backend, box_into(g.in_channels, t.grid.block_extent, p.in_origin, g.in), tile_dx, dx);
  }
}

std::vector<TilePartial> tiled_deconv_param_grad_partials(Backend& backend, const TiledDeconv& t, const Tensor& x,
                                                          const Tensor& dy, bool with_bias) {
  check_tiled_deconv(t);
  const DeconvGeometry g = tile_deconv_geometry(t);
  const std::vector<int64_t> block_out = deconv_block_out_extents(t);
  const int64_t samples = x.rows();
  require_cols("param grads", "x", x, samples, g.in_channels * t.grid.block_points());
  require_cols("param grads", "dy", dy, samples, g.out_channels * extent_product(block_out));
  Tensor tile_x = backend.empty(samples, g.in_features());
  Tensor tile_dy = backend.empty(samples, g.out_features());
  std::vector<TilePartial> partials;
  for (int64_t local = 0; local < t.grid.block_tiles(); ++local) {
    const TilePlace p = place_of(t, local);
    copy_field_box(backend, box_out_of(g.in_channels, t.grid.block_extent, p.in_origin, g.in), x, tile_x);
    copy_field_box(backend, box_out_of(g.out_channels, block_out, p.out_origin, g.out()), dy, tile_dy);
    TilePartial partial;
    partial.tile = t.grid.global_index(local);
    partial.weight_grad = backend.zeros(g.in_channels, g.weight_cols());
    if (with_bias) partial.bias_grad = backend.zeros(1, g.out_channels);
    backend.deconv_accumulate_param_grads(g, tile_x, tile_dy, partial.weight_grad,
                                          with_bias ? &partial.bias_grad : nullptr);
    partials.push_back(std::move(partial));
  }
  return partials;
}

}  // namespace sluice::kernels
