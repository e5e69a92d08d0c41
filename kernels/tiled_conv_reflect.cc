// The tiled conv's backward data with reflect padding at the field's global edges (tiled_conv.h): per tile, dx over
// the tile extended by the forward halo beyond each global edge it touches, then the extension folded back onto its
// mirror inside the tile. Everything per tile, so every split makes the same calls on the same values.
#include <algorithm>
#include <string>

#include "core/common/error.h"
#include "kernels/field_box.h"
#include "kernels/tiled_conv.h"

namespace sluice::kernels {
namespace {

// How far a tile reaches beyond the field's global edges: the forward halo (pad_low below, pad_high above) on each
// side the tile touches, 0 elsewhere.
struct Extension {
  std::vector<int64_t> low, high;
};

Extension extension_of(const TiledConv& t, const std::vector<int64_t>& origin) {
  Extension e{std::vector<int64_t>(t.grid.dims(), 0), std::vector<int64_t>(t.grid.dims(), 0)};
  for (size_t d = 0; d < t.grid.dims(); ++d) {
    const int64_t at = t.grid.block_offset[d] + origin[d];
    if (at == 0) e.low[d] = t.conv.pad_low[d];
    if (at + t.grid.tile[d] == t.grid.global[d]) e.high[d] = t.conv.pad_high[d];
  }
  return e;
}

// The gradients of the reflected points (r, extents = tile + extension) added onto their mirrors in the tile:
// dimension by dimension, the last first, each over the whole extended box; per dimension the low side then the
// high one, m ascending. A fixed order per point, the same in every split.
void fold(Backend& backend, int64_t channels, const std::vector<int64_t>& extents, const Extension& e,
          const std::vector<int64_t>& tile, Tensor& r) {
  for (size_t d = extents.size(); d-- > 0;) {
    std::vector<int64_t> plane = extents;
    plane[d] = 1;
    const auto add_plane = [&](int64_t from, int64_t to) {
      std::vector<int64_t> source(extents.size(), 0), destination(extents.size(), 0);
      source[d] = from;
      destination[d] = to;
      copy_field_box(backend, FieldBox{channels, extents, source, extents, destination, plane, true}, r, r);
    };
    for (int64_t m = 1; m <= e.low[d]; ++m) add_plane(e.low[d] - m, e.low[d] + m);
    const int64_t last = e.low[d] + tile[d] - 1;
    for (int64_t m = 1; m <= e.high[d]; ++m) add_plane(last + m, last - m);
  }
}

// One tile: the gather conv over the extended tile from its dy window (zeros where the window leaves dy_padded:
// beyond the field, where no output lies), folded, its tile part into dx.
void extended_tile(Backend& backend, const TiledConv& t, const std::vector<int64_t>& origin,
                   const Tensor& dy_padded, const Tensor& weight, Tensor& dx) {
  const Extension e = extension_of(t, origin);
  const std::vector<int64_t> padded = backward_padded_extents(t);
  ConvGeometry g = tile_backward_geometry(t);
  for (size_t d = 0; d < t.grid.dims(); ++d) g.in[d] = e.low[d] + t.grid.tile[d] + e.high[d];
  g.out.clear();
  complete_conv_geometry(g);
  const int64_t samples = dy_padded.rows();
  Tensor window = backend.zeros(samples, g.out_features());
  FieldBox part{g.out_channels, padded, {}, g.out, {}, {}, false};
  for (size_t d = 0; d < t.grid.dims(); ++d) {
    const int64_t start = origin[d] - e.low[d];  // the window's first point, as a padded index of dy
    const int64_t first = std::max<int64_t>(start, 0), end = std::min(start + g.out[d], padded[d]);
    part.source_origin.push_back(first);
    part.destination_origin.push_back(first - start);
    part.box.push_back(end - first);
  }
  copy_field_box(backend, part, dy_padded, window);
  Tensor tile_dx = backend.empty(samples, g.in_features());
  backend.conv_backward_data(g, window, weight, tile_dx);
  fold(backend, g.in_channels, g.in, e, t.grid.tile, tile_dx);
  copy_field_box(backend, FieldBox{g.in_channels, g.in, e.low, t.grid.block_extent, origin, t.grid.tile, false},
                 tile_dx, dx);
}

}  // namespace

void check_reflect_tiles(const TiledConv& t, const std::string& name) {
  for (size_t d = 0; d < t.grid.dims(); ++d) {
    const int64_t widest = std::max(t.conv.pad_low[d], t.conv.pad_high[d]);
    if (widest > 0 && t.grid.tile[d] < widest + 1) {
      throw Error(ErrorCode::kInvalidArgument,
                  name + ": padding reflect on a split field needs tiles wider than the halo (the mirror of a tile "
                         "on the field's edge stays in the tile): tile " + std::to_string(t.grid.tile[d]) +
                      " in spatial dimension " + std::to_string(d + 1) + ", halo " + std::to_string(widest) +
                      "; use a larger pipeline.domain_tile");
    }
  }
}

void tiled_conv_backward_data_reflect(Backend& backend, const TiledConv& t, const Tensor& dy_padded,
                                      const Tensor& weight, Tensor& dx) {
  check_tiled_conv(t);
  check_reflect_tiles(t, "tiled conv");
  const ConvGeometry g = tile_backward_geometry(t);
  if (dy_padded.cols() != g.out_channels * extent_product(backward_padded_extents(t)) ||
      dx.rows() != dy_padded.rows() || dx.cols() != g.in_channels * t.grid.block_points()) {
    throw Error(ErrorCode::kInvalidArgument,
                "tiled conv: backward data (reflect): dy_padded or dx has the wrong shape");
  }
  for (int64_t local = 0; local < t.grid.block_tiles(); ++local) {
    extended_tile(backend, t, t.grid.tile_origin(local), dy_padded, weight, dx);
  }
}

}  // namespace sluice::kernels
