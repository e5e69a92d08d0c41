#include "kernels/tiled_upsample.h"

#include <string>

#include "core/common/error.h"
#include "kernels/field_box.h"

namespace sluice::kernels {
namespace {

[[noreturn]] void fail(const std::string& problem) {
  throw Error(ErrorCode::kInvalidArgument, "tiled upsample: " + problem);
}

void require_cols(const char* operand, const Tensor& tensor, int64_t rows, int64_t cols) {
  if (tensor.rows() != rows || tensor.cols() != cols) {
    fail(std::string(operand) + " is [" + std::to_string(tensor.rows()) + "][" + std::to_string(tensor.cols()) +
         "], expected [" + std::to_string(rows) + "][" + std::to_string(cols) + "]");
  }
}

// Which global edges the block's `local`-th tile touches, per dimension.
struct Edges {
  std::vector<bool> low, high;
};

Edges edges_of(const TileGrid& g, int64_t local) {
  const std::vector<int64_t> origin = g.tile_origin(local);
  Edges e{std::vector<bool>(g.dims()), std::vector<bool>(g.dims())};
  for (size_t d = 0; d < g.dims(); ++d) {
    e.low[d] = g.block_offset[d] + origin[d] == 0;
    e.high[d] = g.block_offset[d] + origin[d] + g.tile[d] == g.global[d];
  }
  return e;
}

// The slab of `width` layers at `at` across dimension d of a window of `extents`, moved to `to` (copy or add).
FieldBox slab(int64_t channels, const std::vector<int64_t>& extents, size_t d, int64_t at, int64_t to, int64_t width,
              bool add) {
  FieldBox box = box_out_of(channels, extents, std::vector<int64_t>(extents.size(), 0), extents);
  box.destination_extents = extents;
  box.box[d] = width;
  box.source_origin[d] = at;
  box.destination_origin[d] = to;
  box.add = add;
  return box;
}

// x window (extents tile + 2): the halo layer beyond a global edge = the edge layer (the clamp).
void replicate_edges(Backend& backend, const Edges& e, int64_t channels, const std::vector<int64_t>& extents,
                     Tensor& window) {
  for (size_t d = 0; d < extents.size(); ++d) {
    if (e.low[d]) copy_field_box(backend, slab(channels, extents, d, 1, 0, 1, false), window, window);
    if (e.high[d]) {
      copy_field_box(backend, slab(channels, extents, d, extents[d] - 2, extents[d] - 1, 1, false), window, window);
    }
  }
}

// dy window (extents (tile + 2) · factor): the `factor` layers beyond a global edge = 0 (no outputs there).
void zero_edges(Backend& backend, const Edges& e, int64_t channels, const std::vector<int64_t>& extents,
                const std::vector<int64_t>& factor, Tensor& window) {
  for (size_t d = 0; d < extents.size(); ++d) {
    if (!e.low[d] && !e.high[d]) continue;
    std::vector<int64_t> layer = extents;
    layer[d] = factor[d];
    const Tensor zeros = backend.zeros(window.rows(), channels * extent_product(layer));
    FieldBox box = box_into(channels, extents, std::vector<int64_t>(extents.size(), 0), layer);
    if (e.low[d]) copy_field_box(backend, box, zeros, window);
    box.destination_origin[d] = extents[d] - factor[d];
    if (e.high[d]) copy_field_box(backend, box, zeros, window);
  }
}

// dx window (extents tile + 2): the gradient of a replicated halo layer added onto the edge layer it copies.
void fold_edges(Backend& backend, const Edges& e, int64_t channels, const std::vector<int64_t>& extents,
                Tensor& window) {
  for (size_t d = 0; d < extents.size(); ++d) {
    if (e.low[d]) copy_field_box(backend, slab(channels, extents, d, 0, 1, 1, true), window, window);
    if (e.high[d]) {
      copy_field_box(backend, slab(channels, extents, d, extents[d] - 1, extents[d] - 2, 1, true), window, window);
    }
  }
}

std::vector<int64_t> ones(size_t dims) { return std::vector<int64_t>(dims, 1); }

}  // namespace

void check_tiled_upsample(const TiledUpsample& t) {
  check_tile_grid(t.grid);
  check_resample_geometry(t.resample);
  if (t.resample.in != t.grid.global) fail("the input extents are not the grid's global extents");
  if (t.resample.mode != ResampleMode::kLinear) fail("only linear upsampling is tiled; call nearest on the block");
}

ResampleGeometry tile_upsample_geometry(const TiledUpsample& t) {
  ResampleGeometry g = t.resample;
  g.in = t.grid.tile;
  for (int64_t& extent : g.in) extent += 2;
  return g;
}

std::vector<int64_t> upsample_forward_padded_extents(const TiledUpsample& t) {
  std::vector<int64_t> extents = t.grid.block_extent;
  for (int64_t& extent : extents) extent += 2;
  return extents;
}

std::vector<int64_t> upsample_backward_padded_extents(const TiledUpsample& t) {
  std::vector<int64_t> extents = upsample_forward_padded_extents(t);
  for (size_t d = 0; d < extents.size(); ++d) extents[d] *= t.resample.factor[d];
  return extents;
}

void tiled_upsample_forward(Backend& backend, const TiledUpsample& t, const Tensor& x_padded, Tensor& y) {
  check_tiled_upsample(t);
  const ResampleGeometry g = tile_upsample_geometry(t);
  const std::vector<int64_t> padded = upsample_forward_padded_extents(t), out = g.out(), factor = g.factor;
  std::vector<int64_t> block_out = t.grid.block_extent, tile_out = t.grid.tile;
  for (size_t d = 0; d < factor.size(); ++d) block_out[d] *= factor[d], tile_out[d] *= factor[d];
  const int64_t samples = x_padded.rows();
  require_cols("x_padded", x_padded, samples, g.channels * extent_product(padded));
  require_cols("y", y, samples, g.channels * extent_product(block_out));
  Tensor window = backend.empty(samples, g.in_features()), window_y = backend.empty(samples, g.out_features());
  for (int64_t local = 0; local < t.grid.block_tiles(); ++local) {
    const std::vector<int64_t> origin = t.grid.tile_origin(local);  // padded index = block index + 1
    copy_field_box(backend, box_out_of(g.channels, padded, origin, g.in), x_padded, window);
    replicate_edges(backend, edges_of(t.grid, local), g.channels, g.in, window);
    backend.resample_forward(g, window, window_y);
    // The tile's outputs are the window's without the `factor` outputs of each halo point.
    FieldBox into = box_into(g.channels, block_out, origin, tile_out);
    into.source_extents = out;
    into.source_origin = factor;
    for (size_t d = 0; d < factor.size(); ++d) into.destination_origin[d] *= factor[d];
    copy_field_box(backend, into, window_y, y);
  }
}

void tiled_upsample_backward_data(Backend& backend, const TiledUpsample& t, const Tensor& dy_padded, Tensor& dx) {
  check_tiled_upsample(t);
  const ResampleGeometry g = tile_upsample_geometry(t);
  const std::vector<int64_t> padded = upsample_backward_padded_extents(t), out = g.out(), factor = g.factor;
  const int64_t samples = dy_padded.rows();
  require_cols("dy_padded", dy_padded, samples, g.channels * extent_product(padded));
  require_cols("dx", dx, samples, g.channels * t.grid.block_points());
  Tensor window = backend.empty(samples, g.out_features()), window_dx = backend.empty(samples, g.in_features());
  for (int64_t local = 0; local < t.grid.block_tiles(); ++local) {
    const Edges edges = edges_of(t.grid, local);
    std::vector<int64_t> origin = t.grid.tile_origin(local);  // the dy window starts `factor` before the tile's
    for (size_t d = 0; d < factor.size(); ++d) origin[d] *= factor[d];  // outputs: padded index = origin · factor
    copy_field_box(backend, box_out_of(g.channels, padded, origin, out), dy_padded, window);
    zero_edges(backend, edges, g.channels, out, factor, window);
    backend.resample_backward(g, window, window_dx);
    fold_edges(backend, edges, g.channels, g.in, window_dx);
    FieldBox into = box_into(g.channels, t.grid.block_extent, t.grid.tile_origin(local), t.grid.tile);
    into.source_extents = g.in;
    into.source_origin = ones(g.in.size());
    copy_field_box(backend, into, window_dx, dx);
  }
}

}  // namespace sluice::kernels
