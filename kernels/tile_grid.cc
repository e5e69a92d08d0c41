#include "kernels/tile_grid.h"

#include <string>

#include "core/common/error.h"

namespace sluice::kernels {
namespace {

[[noreturn]] void fail(const std::string& problem) {
  throw Error(ErrorCode::kInvalidArgument, "tile grid: " + problem);
}

// Tiles per dimension of the block (row-major over these is the block's local order).
std::vector<int64_t> block_tile_counts(const TileGrid& g) {
  std::vector<int64_t> counts(g.dims());
  for (size_t d = 0; d < g.dims(); ++d) counts[d] = g.block_extent[d] / g.tile[d];
  return counts;
}

// The block's `local`-th tile as a tile position per dimension, relative to the block.
std::vector<int64_t> local_tile_position(const TileGrid& g, int64_t local) {
  const std::vector<int64_t> counts = block_tile_counts(g);
  std::vector<int64_t> position(g.dims());
  for (size_t d = g.dims(); d-- > 0;) {
    position[d] = local % counts[d];
    local /= counts[d];
  }
  return position;
}

void check_dimension(const TileGrid& g, size_t d) {
  const std::string at = " in dimension " + std::to_string(d);
  const int64_t tile = g.tile[d], global = g.global[d], offset = g.block_offset[d], extent = g.block_extent[d];
  if (tile < 1 || global < 1 || extent < 1 || offset < 0) {
    fail("tile " + std::to_string(tile) + ", global extent " + std::to_string(global) + ", block offset " +
         std::to_string(offset) + " and block extent " + std::to_string(extent) + at +
         " must be positive (the offset non-negative)");
  }
  if (global % tile != 0) fail("tile " + std::to_string(tile) + at + " does not divide the global extent " +
                               std::to_string(global));
  if (offset % tile != 0 || extent % tile != 0) {
    fail("the block at offset " + std::to_string(offset) + " with extent " + std::to_string(extent) + at +
         " is not a union of whole tiles of " + std::to_string(tile));
  }
  if (offset + extent > global) {
    fail("the block at offset " + std::to_string(offset) + " with extent " + std::to_string(extent) + at +
         " reaches past the global extent " + std::to_string(global));
  }
}

}  // namespace

int64_t extent_product(const std::vector<int64_t>& values) {
  int64_t result = 1;
  for (int64_t v : values) result *= v;
  return result;
}

int64_t TileGrid::tile_points() const { return extent_product(tile); }
int64_t TileGrid::block_points() const { return extent_product(block_extent); }
int64_t TileGrid::block_tiles() const { return extent_product(block_tile_counts(*this)); }

int64_t TileGrid::global_tiles() const {
  int64_t count = 1;
  for (size_t d = 0; d < dims(); ++d) count *= global[d] / tile[d];
  return count;
}

std::vector<int64_t> TileGrid::tile_origin(int64_t local) const {
  std::vector<int64_t> origin = local_tile_position(*this, local);
  for (size_t d = 0; d < dims(); ++d) origin[d] *= tile[d];
  return origin;
}

int64_t TileGrid::global_index(int64_t local) const {
  const std::vector<int64_t> position = local_tile_position(*this, local);
  int64_t index = 0;
  for (size_t d = 0; d < dims(); ++d) index = index * (global[d] / tile[d]) + block_offset[d] / tile[d] + position[d];
  return index;
}

void check_tile_grid(const TileGrid& g) {
  const size_t dims = g.global.size();
  if (dims < 1 || dims > 3) fail(std::to_string(dims) + " spatial dimensions; 1 to 3 are supported");
  if (g.tile.size() != dims || g.block_offset.size() != dims || g.block_extent.size() != dims) {
    fail("global extents, tile, block offset and block extent have " + std::to_string(dims) + ", " +
         std::to_string(g.tile.size()) + ", " + std::to_string(g.block_offset.size()) + " and " +
         std::to_string(g.block_extent.size()) + " values; they must have one per spatial dimension");
  }
  for (size_t d = 0; d < dims; ++d) check_dimension(g, d);
}

TileGrid whole_field_grid(const std::vector<int64_t>& global, const std::vector<int64_t>& tile) {
  TileGrid grid;
  grid.global = global;
  grid.tile = tile;
  grid.block_offset.assign(global.size(), 0);
  grid.block_extent = global;
  return grid;
}

}  // namespace sluice::kernels
