#include "core/runtime/normalization_tiles.h"

#include <cmath>
#include <cstddef>

namespace sluice::runtime {
namespace {

// The block-relative flat index of the point `offset` (per dimension) past `origin` in a block of `extent`.
int64_t block_index(const std::vector<int64_t>& origin, const std::vector<int64_t>& offset,
                    const std::vector<int64_t>& extent) {
  int64_t index = 0;
  for (size_t d = 0; d < extent.size(); ++d) index = index * extent[d] + origin[d] + offset[d];
  return index;
}

// One tile's partial of one channel's values (block points `values`), in the tile's row-major point order.
double tile_partial(const float* values, const kernels::TileGrid& grid, const std::vector<int64_t>& origin,
                    const double* mean) {
  std::vector<int64_t> offset(grid.dims(), 0);
  double sum = 0.0;
  for (int64_t k = 0; k < grid.tile_points(); ++k) {
    const double x = values[block_index(origin, offset, grid.block_extent)];
    if (mean != nullptr) {
      const double d = x - *mean;
      sum += d * d;
    } else {
      sum += x;
    }
    for (size_t d = grid.dims(); d-- > 0;) {  // next point, last dimension fastest
      if (++offset[d] < grid.tile[d]) break;
      offset[d] = 0;
    }
  }
  return sum;
}

}  // namespace

void add_tile_partials(const float* block, int64_t rows, int64_t channels, const kernels::TileGrid& grid,
                       const double* mean, double* out) {
  const int64_t points = grid.block_points();
  const int64_t global_tiles = grid.global_tiles();
  for (int64_t local = 0; local < grid.block_tiles(); ++local) {
    const std::vector<int64_t> origin = grid.tile_origin(local);
    const int64_t t = grid.global_index(local);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < channels; ++c) {
        const float* values = block + (r * channels + c) * points;
        out[(r * global_tiles + t) * channels + c] = tile_partial(values, grid, origin, mean ? mean + c : nullptr);
      }
    }
  }
}

std::vector<double> channel_totals(const std::vector<double>& partials, int64_t rows, int64_t global_tiles,
                                   int64_t channels) {
  std::vector<double> totals(static_cast<size_t>(channels), 0.0);
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t t = 0; t < global_tiles; ++t) {
        totals[static_cast<size_t>(c)] += partials[static_cast<size_t>((r * global_tiles + t) * channels + c)];
      }
    }
  }
  return totals;
}

FeatureScaling tiled_scaling(const std::vector<double>& sums, const std::vector<double>& squares, double count,
                             int64_t points) {
  FeatureScaling scaling;
  scaling.points = points;
  for (size_t c = 0; c < sums.size(); ++c) {
    scaling.mean.push_back(static_cast<float>(sums[c] / count));
    const auto std = static_cast<float>(std::sqrt(squares[c] / count));
    scaling.std.push_back(std::isnormal(std) ? std : 1.0f);  // as statistics_of: a constant channel is only shifted
  }
  return scaling;
}

}  // namespace sluice::runtime
