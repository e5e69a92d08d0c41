#include "core/comm/halo_layout.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "core/common/error.h"

namespace sluice::comm {
namespace {

[[noreturn]] void refuse(const std::string& what) {
  throw Error(ErrorCode::kInvalidArgument, "halo exchange: " + what);
}

std::string list_text(const std::vector<int64_t>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out;
}

std::string dimension_text(size_t d) { return "spatial dimension " + std::to_string(d + 1); }

// Floats per point of halo width in the largest strip any block of the grid exchanges along dimension `d`: every
// padded extent below d (their halos are filled by then), every block extent above d, each the largest along its
// dimension. From the shared extents, so every rank decides the same.
int64_t largest_strip_floats_per_width(const HaloBlock& block, size_t d) {
  int64_t floats = block.samples * block.channels;
  for (size_t j = 0; j < block.dims.size(); ++j) {
    if (j == d) continue;
    const HaloDimension& dim = block.dims[j];
    const int64_t largest = *std::max_element(dim.block_extents.begin(), dim.block_extents.end());
    floats *= largest + (j < d ? dim.halo_low + dim.halo_high : 0);
  }
  return floats;
}

// A zero side must lie on the global edge: its neighbour across the edge then zeroes its side too (both derive it
// from the shared grid), so no rank waits for a message the other does not send.
void check_sides(const HaloDimension& dim, const std::string& name) {
  const int last = static_cast<int>(dim.block_extents.size()) - 1;
  const std::string block = "block " + std::to_string(dim.block);
  if (dim.fill_low != HaloSide::kNeighbour && dim.block != 0) {
    refuse(name + ": " + block + " has a zero or reflected low halo, but only block 0's low side lies on the "
           "field's edge");
  }
  if (dim.fill_high != HaloSide::kNeighbour && dim.block != last) {
    refuse(name + ": " + block + " has a zero or reflected high halo, but only block " + std::to_string(last) +
           "'s high side lies on the field's edge");
  }
  for (const auto& [side, width] : {std::pair<HaloSide, int64_t>{dim.fill_low, dim.halo_low}, {dim.fill_high,
                                                                                               dim.halo_high}}) {
    if (side == HaloSide::kReflect && dim.extent() < width + 1) {
      refuse(name + ": " + block + " is " + std::to_string(dim.extent()) + " points wide, but a reflected halo of " +
             std::to_string(width) + " needs " + std::to_string(width + 1) + " (the edge point is not repeated)");
    }
  }
  if (last == 0 && dim.fill_low != dim.fill_high) {
    refuse(name + " has one block: its low and high halo must be filled the same way");
  }
}

void check_dimension(const HaloDimension& dim, size_t d, int comm_size, int my_rank) {
  const std::string name = dimension_text(d);
  if (dim.block_extents.empty()) refuse(name + " has no blocks");
  for (const int64_t e : dim.block_extents) {
    if (e < 1) refuse(name + ": block extents must be positive, got " + list_text(dim.block_extents));
  }
  const int blocks = static_cast<int>(dim.block_extents.size());
  if (dim.block < 0 || dim.block >= blocks) {
    refuse(name + ": block " + std::to_string(dim.block) + " is outside its " + std::to_string(blocks) + " blocks");
  }
  if (dim.halo_low < 0 || dim.halo_high < 0) {
    refuse(name + ": halo widths must be >= 0, got low " + std::to_string(dim.halo_low) + ", high " +
           std::to_string(dim.halo_high));
  }
  const int64_t smallest = *std::min_element(dim.block_extents.begin(), dim.block_extents.end());
  if (std::max(dim.halo_low, dim.halo_high) > smallest) {
    refuse(name + ": halo widths low " + std::to_string(dim.halo_low) + ", high " + std::to_string(dim.halo_high) +
           " are wider than its smallest block (block extents " + list_text(dim.block_extents) +
           "); a halo may reach only into the neighbouring block");
  }
  for (const int rank : {dim.low_rank, dim.high_rank}) {
    if (rank < 0 || rank >= comm_size) {
      refuse(name + ": neighbour rank " + std::to_string(rank) + " is outside the " + std::to_string(comm_size) +
             "-rank communicator");
    }
  }
  const bool self = dim.low_rank == my_rank || dim.high_rank == my_rank;
  if (blocks == 1 && (dim.low_rank != my_rank || dim.high_rank != my_rank)) {
    refuse(name + " has one block: both neighbours must be this rank (" + std::to_string(my_rank) + "), got " +
           std::to_string(dim.low_rank) + " and " + std::to_string(dim.high_rank));
  }
  if (blocks > 1 && self) {
    refuse(name + " has " + std::to_string(blocks) + " blocks but this rank (" + std::to_string(my_rank) +
           ") is named as its own neighbour");
  }
  check_sides(dim, name);
}

}  // namespace

int64_t HaloBlock::block_floats() const {
  int64_t floats = samples * channels;
  for (const HaloDimension& d : dims) floats *= d.extent();
  return floats;
}

int64_t HaloBlock::padded_floats() const {
  int64_t floats = samples * channels;
  for (const HaloDimension& d : dims) floats *= d.padded_extent();
  return floats;
}

void check_halo_block(const HaloBlock& block, int comm_size, int my_rank) {
  if (block.dims.empty() || block.dims.size() > 3) {
    refuse("a block needs 1 to 3 spatial dimensions, got " + std::to_string(block.dims.size()));
  }
  if (block.samples < 1 || block.channels < 1) {
    refuse("samples and channels must be positive, got " + std::to_string(block.samples) + " samples, " +
           std::to_string(block.channels) + " channels");
  }
  for (size_t d = 0; d < block.dims.size(); ++d) check_dimension(block.dims[d], d, comm_size, my_rank);
  for (size_t d = 0; d < block.dims.size(); ++d) {
    const HaloDimension& dim = block.dims[d];
    const int64_t widest = std::max(dim.halo_low, dim.halo_high);
    if (widest > 0 && largest_strip_floats_per_width(block, d) > std::numeric_limits<int>::max() / widest) {
      refuse(dimension_text(d) + ": a halo strip would exceed 2^31-1 floats, MPI's largest message");
    }
  }
}

namespace {

void check_grid(const HaloGrid& grid, int comm_size) {
  const size_t k = grid.block_extents.size();
  if (k == 0 || k > 3 || grid.halo_low.size() != k || grid.halo_high.size() != k) {
    refuse("a block grid needs the same number (1 to 3) of block-extent lists, low and high halo widths, got " +
           std::to_string(k) + ", " + std::to_string(grid.halo_low.size()) + " and " +
           std::to_string(grid.halo_high.size()));
  }
  int64_t blocks = 1;
  for (size_t d = 0; d < k; ++d) {
    if (grid.block_extents[d].empty()) refuse(dimension_text(d) + " has no blocks");
    blocks *= static_cast<int64_t>(grid.block_extents[d].size());
  }
  if (!grid.ranks.empty() && static_cast<int64_t>(grid.ranks.size()) != blocks) {
    refuse("the rank table has " + std::to_string(grid.ranks.size()) + " entries for " + std::to_string(blocks) +
           " blocks");
  }
  std::vector<int> ranks = grid.ranks;
  if (ranks.empty()) {
    for (int64_t b = 0; b < blocks; ++b) ranks.push_back(grid.base_rank + static_cast<int>(b));
  }
  for (const int r : ranks) {
    if (r < 0 || r >= comm_size) {
      refuse("block rank " + std::to_string(r) + " is outside the " + std::to_string(comm_size) +
             "-rank communicator");
    }
  }
  std::sort(ranks.begin(), ranks.end());
  if (std::adjacent_find(ranks.begin(), ranks.end()) != ranks.end()) {
    refuse("rank " + std::to_string(*std::adjacent_find(ranks.begin(), ranks.end())) + " holds two blocks");
  }
}

}  // namespace

HaloBlock halo_block_of(const HaloGrid& grid, int64_t samples, int64_t channels, int block_number, int comm_size) {
  check_grid(grid, comm_size);
  const size_t k = grid.block_extents.size();
  std::vector<int> counts(k), index(k);
  int64_t blocks = 1;
  for (size_t d = 0; d < k; ++d) {
    counts[d] = static_cast<int>(grid.block_extents[d].size());
    blocks *= counts[d];
  }
  if (block_number < 0 || block_number >= blocks) {
    refuse("block number " + std::to_string(block_number) + " is outside the grid's " + std::to_string(blocks) +
           " blocks");
  }
  for (size_t d = k, rest = static_cast<size_t>(block_number); d-- > 0;) {  // row-major: last dimension fastest
    index[d] = static_cast<int>(rest % static_cast<size_t>(counts[d]));
    rest /= static_cast<size_t>(counts[d]);
  }
  auto rank_of = [&](const std::vector<int>& at) {
    int64_t number = 0;
    for (size_t d = 0; d < k; ++d) number = number * counts[d] + at[d];
    return grid.ranks.empty() ? grid.base_rank + static_cast<int>(number) : grid.ranks[static_cast<size_t>(number)];
  };
  HaloBlock block;
  block.samples = samples;
  block.channels = channels;
  for (size_t d = 0; d < k; ++d) {
    HaloDimension dim;
    dim.block_extents = grid.block_extents[d];
    dim.block = index[d];
    dim.halo_low = grid.halo_low[d];
    dim.halo_high = grid.halo_high[d];
    std::vector<int> low = index, high = index;
    low[d] = (index[d] + counts[d] - 1) % counts[d];
    high[d] = (index[d] + 1) % counts[d];
    dim.low_rank = rank_of(low);
    dim.high_rank = rank_of(high);
    block.dims.push_back(std::move(dim));
  }
  check_halo_block(block, comm_size, rank_of(index));
  return block;
}

std::vector<int64_t> even_block_extents(int64_t extent, int blocks) {
  if (blocks < 1 || blocks > extent) {
    throw Error(ErrorCode::kInvalidArgument, "cannot split " + std::to_string(extent) + " points into " +
                                                 std::to_string(blocks) + " blocks of at least one point");
  }
  std::vector<int64_t> extents(static_cast<size_t>(blocks), extent / blocks);
  for (int64_t b = 0; b < extent % blocks; ++b) ++extents[static_cast<size_t>(b)];
  return extents;
}

void set_global_edge_fill(HaloBlock& block, HaloSide edge) {
  for (HaloDimension& dim : block.dims) {
    if (dim.block == 0) dim.fill_low = edge;
    if (dim.block + 1 == static_cast<int>(dim.block_extents.size())) dim.fill_high = edge;
  }
}

int64_t halo_bytes_per_fill(const HaloBlock& block) {
  int64_t floats = 0;
  for (size_t d = 0; d < block.dims.size(); ++d) {
    const HaloDimension& dim = block.dims[d];
    if (dim.single_block()) continue;  // a local copy
    int64_t per_width = block.samples * block.channels;
    for (size_t j = 0; j < block.dims.size(); ++j) {
      if (j != d) per_width *= j < d ? block.dims[j].padded_extent() : block.dims[j].extent();
    }
    // to the high neighbour its low halo (width low), to the low neighbour its high halo (width high)
    const int64_t to_high = dim.fill_high == HaloSide::kNeighbour ? dim.halo_low : 0;
    const int64_t to_low = dim.fill_low == HaloSide::kNeighbour ? dim.halo_high : 0;
    floats += per_width * (to_high + to_low);
  }
  return floats * static_cast<int64_t>(sizeof(float));
}

}  // namespace sluice::comm
