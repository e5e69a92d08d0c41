#include "kernels/tiled_conv.h"

#include <string>
#include <utility>

#include "core/common/error.h"
#include "kernels/field_box.h"

namespace sluice::kernels {
namespace {

[[noreturn]] void fail(const std::string& problem) {
  throw Error(ErrorCode::kInvalidArgument, "tiled conv: " + problem);
}

std::vector<int64_t> zeros_like(const std::vector<int64_t>& values) { return std::vector<int64_t>(values.size(), 0); }

ConvGeometry tile_geometry(const ConvGeometry& conv, std::vector<int64_t> in, std::vector<int64_t> pad) {
  ConvGeometry g = conv;
  g.in = std::move(in);
  g.pad_low = pad;
  g.pad_high = std::move(pad);
  g.out.clear();
  complete_conv_geometry(g);
  return g;
}

void require_cols(const char* op, const char* operand, const Tensor& tensor, int64_t rows, int64_t cols) {
  if (tensor.rows() != rows || tensor.cols() != cols) {
    fail(std::string(op) + ": " + operand + " is [" + std::to_string(tensor.rows()) + "][" +
         std::to_string(tensor.cols()) + "], expected [" + std::to_string(rows) + "][" + std::to_string(cols) + "]");
  }
}

// A block of one tile (the split's usual case: pipeline.domain_tile = one block): the tile's window is the whole
// padded block and its result the whole block, so the calls read and write the block's own tensors instead of
// copies of them. The same call on the same values, so the same bits; it saves a window and a result per call,
// which on such a block are as large as the padded input and the output themselves (issue 32: a split rank's RSS).
bool one_tile_block(const TiledConv& t) { return t.grid.block_tiles() == 1; }

}  // namespace

void check_tiled_conv(const TiledConv& t) {
  check_tile_grid(t.grid);
  ConvGeometry whole = t.conv;
  whole.out.clear();
  complete_conv_geometry(whole);
  if (whole.in != t.grid.global) fail("the conv's input extents are not the grid's global extents");
  for (size_t d = 0; d < whole.dims(); ++d) {
    const std::string at = " in dimension " + std::to_string(d);
    if (whole.stride[d] != 1) fail("stride " + std::to_string(whole.stride[d]) + at + "; only stride 1 is tiled");
    if (whole.out[d] != whole.in[d]) {
      fail("padding " + std::to_string(whole.pad_low[d]) + "+" + std::to_string(whole.pad_high[d]) + at +
           " does not keep the extent (a 'same' conv needs dilation·(kernel − 1) = " +
           std::to_string(whole.dilation[d] * (whole.kernel[d] - 1)) + ")");
    }
  }
}

ConvGeometry tile_forward_geometry(const TiledConv& t) {
  std::vector<int64_t> window = t.grid.tile;
  for (size_t d = 0; d < window.size(); ++d) window[d] += t.conv.pad_low[d] + t.conv.pad_high[d];
  return tile_geometry(t.conv, window, zeros_like(window));
}

ConvGeometry tile_backward_geometry(const TiledConv& t) {
  std::vector<int64_t> pad = t.grid.tile;
  for (size_t d = 0; d < pad.size(); ++d) pad[d] = t.conv.pad_low[d] + t.conv.pad_high[d];
  return tile_geometry(t.conv, t.grid.tile, pad);
}

std::vector<int64_t> forward_padded_extents(const TiledConv& t) {
  std::vector<int64_t> extents = t.grid.block_extent;
  for (size_t d = 0; d < extents.size(); ++d) extents[d] += t.conv.pad_low[d] + t.conv.pad_high[d];
  return extents;
}

std::vector<int64_t> backward_padded_extents(const TiledConv& t) { return forward_padded_extents(t); }

void tiled_conv_forward(Backend& backend, const TiledConv& t, const Tensor& x_padded, const Tensor& weight,
                        const Tensor* bias, Tensor& y) {
  check_tiled_conv(t);
  const ConvGeometry g = tile_forward_geometry(t);
  const int64_t samples = x_padded.rows();
  const std::vector<int64_t> padded = forward_padded_extents(t);
  require_cols("forward", "x_padded", x_padded, samples, g.in_channels * extent_product(padded));
  require_cols("forward", "y", y, samples, g.out_channels * t.grid.block_points());
  if (one_tile_block(t)) {
    backend.conv_forward(g, x_padded, weight, bias, y);
    return;
  }
  Tensor window = backend.empty(samples, g.in_features());
  Tensor out = backend.empty(samples, g.out_features());
  for (int64_t local = 0; local < t.grid.block_tiles(); ++local) {
    const std::vector<int64_t> origin = t.grid.tile_origin(local);  // padded index = block index + lo
    copy_field_box(backend, box_out_of(g.in_channels, padded, origin, g.in), x_padded, window);
    backend.conv_forward(g, window, weight, bias, out);
    copy_field_box(backend, box_into(g.out_channels, t.grid.block_extent, origin, t.grid.tile), out, y);
  }
}

void tiled_conv_backward_data(Backend& backend, const TiledConv& t, const Tensor& dy_padded, const Tensor& weight,
                              Tensor& dx) {
  check_tiled_conv(t);
  const ConvGeometry g = tile_backward_geometry(t);
  const int64_t samples = dy_padded.rows();
  const std::vector<int64_t> padded = backward_padded_extents(t);
  require_cols("backward data", "dy_padded", dy_padded, samples, g.out_channels * extent_product(padded));
  require_cols("backward data", "dx", dx, samples, g.in_channels * t.grid.block_points());
  if (one_tile_block(t)) {
    backend.conv_backward_data(g, dy_padded, weight, dx);
    return;
  }
  Tensor window = backend.empty(samples, g.out_features());
  Tensor tile_dx = backend.empty(samples, g.in_features());
  for (int64_t local = 0; local < t.grid.block_tiles(); ++local) {
    // The dy window tile − hi .. tile + lo starts at padded index tile + hi − hi.
    const std::vector<int64_t> origin = t.grid.tile_origin(local);
    copy_field_box(backend, box_out_of(g.out_channels, padded, origin, g.out), dy_padded, window);
    backend.conv_backward_data(g, window, weight, tile_dx);
    copy_field_box(backend, box_into(g.in_channels, t.grid.block_extent, origin, t.grid.tile), tile_dx, dx);
  }
}

std::vector<TilePartial> tiled_conv_param_grad_partials(Backend& backend, const TiledConv& t,
                                                        const Tensor& x_padded, const Tensor& dy, bool with_bias) {
  check_tiled_conv(t);
  const ConvGeometry g = tile_forward_geometry(t);
  const int64_t samples = x_padded.rows();
  const std::vector<int64_t> padded = forward_padded_extents(t);
  require_cols("param grads", "x_padded", x_padded, samples, g.in_channels * extent_product(padded));
  require_cols("param grads", "dy", dy, samples, g.out_channels * t.grid.block_points());
  // The partial of the block's `local`-th tile from its window of x and its dy.
  auto partial_of = [&](int64_t local, const Tensor& window, const Tensor& tile_dy) {
    TilePartial partial;
    partial.tile = t.grid.global_index(local);
    partial.weight_grad = backend.zeros(g.out_channels, g.weight_cols());
    if (with_bias) partial.bias_grad = backend.zeros(1, g.out_channels);
    backend.conv_accumulate_param_grads(g, window, tile_dy, partial.weight_grad,
                                        with_bias ? &partial.bias_grad : nullptr);
    return partial;
  };
  std::vector<TilePartial> partials;
  partials.reserve(static_cast<size_t>(t.grid.block_tiles()));
  if (one_tile_block(t)) {
    partials.push_back(partial_of(0, x_padded, dy));
    return partials;
  }
  Tensor window = backend.empty(samples, g.in_features());
  Tensor tile_dy = backend.empty(samples, g.out_features());
  for (int64_t local = 0; local < t.grid.block_tiles(); ++local) {
    const std::vector<int64_t> origin = t.grid.tile_origin(local);
    copy_field_box(backend, box_out_of(g.in_channels, padded, origin, g.in), x_padded, window);
    copy_field_box(backend, box_out_of(g.out_channels, t.grid.block_extent, origin, t.grid.tile), dy, tile_dy);
    partials.push_back(partial_of(local, window, tile_dy));
  }
  return partials;
}

}  // namespace sluice::kernels
