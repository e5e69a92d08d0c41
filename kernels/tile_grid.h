// The canonical tiling of a field split into blocks (issue 32, "exactness by construction"; docs/DOMAIN.md).
// The tile extents are fixed by the model, not by the split: every block of every split is a union of whole tiles,
// and every spatial op and reduction is formed per tile (kernels/tiled_conv.h), so a block's results are the same
// bits whatever the other blocks are. Pure arithmetic, no library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sluice::kernels {

// One block of a field of 1 to 3 spatial dimensions, at one resolution level, and the tiles it holds.
// Tiles are numbered row-major (last dimension fastest) over the GLOBAL tile grid; a block's own tiles are visited
// row-major over the block's tile grid, which is ascending global order too (a box of a row-major grid).
struct TileGrid {
  std::vector<int64_t> global;        // the field's spatial extents at this level
  std::vector<int64_t> tile;          // canonical tile extents at this level
  std::vector<int64_t> block_offset;  // the block's first point per dimension
  std::vector<int64_t> block_extent;  // the block's points per dimension

  size_t dims() const { return global.size(); }
  int64_t tile_points() const;    // Π tile
  int64_t block_points() const;   // Π block_extent
  int64_t block_tiles() const;    // tiles in the block
  int64_t global_tiles() const;   // tiles in the whole field
  // The first point of the block's `local`-th tile, in block coordinates (0 = the block's first point).
  std::vector<int64_t> tile_origin(int64_t local) const;
  // The global (row-major) index of the block's `local`-th tile.
  int64_t global_index(int64_t local) const;
};

// Throws Error(kInvalidArgument) "tile grid: ..." naming the dimension and values when the grid is not one: 1 to 3
// dimensions, the same count in every field, positive tiles and extents, a tile that does not divide the global
// extent, the block's offset or its extent, or a block reaching past the field.
void check_tile_grid(const TileGrid& grid);

// Π values (the points of a box of these extents).
int64_t extent_product(const std::vector<int64_t>& values);

// The grid of a whole field held as one block (offset 0, extent = global): the undecomposed run.
TileGrid whole_field_grid(const std::vector<int64_t>& global, const std::vector<int64_t>& tile);

}  // namespace sluice::kernels
