#include "core/runtime/domain_field.h"

#include <string>

#include "core/common/error.h"

namespace sluice::runtime {

namespace {

[[noreturn]] void refuse(const std::string& why) {
  throw Error(ErrorCode::kInvalidArgument, "domain field: " + why);
}

std::string dim_text(size_t d) { return "spatial dimension " + std::to_string(d + 1); }

// Both views of the block must agree, dimension by dimension: the halo layout's block extents and position give
// the tile grid's global extent, offset and extent.
void check_same_block(const comm::HaloBlock& block, const kernels::TileGrid& grid) {
  if (block.dims.size() != grid.dims()) {
    refuse("the block grid has " + std::to_string(block.dims.size()) + " dimensions, the tile grid " +
           std::to_string(grid.dims()));
  }
  for (size_t d = 0; d < grid.dims(); ++d) {
    const comm::HaloDimension& dim = block.dims[d];
    int64_t offset = 0, global = 0;
    for (size_t b = 0; b < dim.block_extents.size(); ++b) {
      if (static_cast<int>(b) < dim.block) offset += dim.block_extents[b];
      global += dim.block_extents[b];
    }
    if (global != grid.global[d] || offset != grid.block_offset[d] || dim.extent() != grid.block_extent[d]) {
      refuse(dim_text(d) + ": the block grid puts the block at " + std::to_string(offset) + " + " +
             std::to_string(dim.extent()) + " of " + std::to_string(global) + ", the tile grid at " +
             std::to_string(grid.block_offset[d]) + " + " + std::to_string(grid.block_extent[d]) + " of " +
             std::to_string(grid.global[d]));
    }
  }
}

// `value` · factor (refine) or / factor (coarsen, refused unless exact), naming what is scaled.
int64_t scaled(int64_t value, int64_t factor, bool refine, size_t d, const char* what) {
  if (factor < 1) refuse(dim_text(d) + ": factor " + std::to_string(factor) + " < 1");
  if (refine) return value * factor;
  if (value % factor != 0) {
    refuse(dim_text(d) + ": " + what + " " + std::to_string(value) + " is not divisible by the factor " +
           std::to_string(factor));
  }
  return value / factor;
}

}  // namespace

DomainField::DomainField(comm::HaloChannel& channel, comm::TileGather& gather, const comm::HaloBlock& block,
                         const kernels::TileGrid& grid)
    : channel_(channel), gather_(gather), block_(block), grid_(grid) {
  kernels::check_tile_grid(grid_);
  check_same_block(block_, grid_);
  block_.samples = 1;
  block_.channels = 1;
  for (comm::HaloDimension& dim : block_.dims) dim.halo_low = dim.halo_high = 0;
  comm::check_halo_block(block_, channel_.size(), channel_.rank());
}

kernels::Tensor DomainField::padded(const kernels::Tensor& block, int64_t channels, const std::vector<int64_t>& low,
                                    const std::vector<int64_t>& high, comm::HaloSide edge) const {
  require_host("domain halo fill", "block", block);
  if (low.size() != grid_.dims() || high.size() != grid_.dims()) {
    refuse("halo widths for " + std::to_string(low.size()) + " and " + std::to_string(high.size()) +
           " dimensions, the field has " + std::to_string(grid_.dims()));
  }
  comm::HaloBlock layout = block_;
  layout.samples = block.rows();
  layout.channels = channels;
  for (size_t d = 0; d < grid_.dims(); ++d) {
    layout.dims[d].halo_low = low[d];
    layout.dims[d].halo_high = high[d];
  }
  comm::set_global_edge_fill(layout, edge);
  if (block.cols() != channels * grid_.block_points()) {
    refuse("a block of " + std::to_string(block.cols()) + " columns, expected " + std::to_string(channels) +
           " channels x " + std::to_string(grid_.block_points()) + " points");
  }
  int64_t padded_points = 1;
  for (const comm::HaloDimension& dim : layout.dims) padded_points *= dim.padded_extent();
  kernels::Tensor out = kernels::Tensor::host_uninitialized(block.rows(), channels * padded_points);
  comm::halo_fill(channel_, layout, block.data(), out.data());
  return out;
}

DomainField DomainField::coarsened(const std::vector<int64_t>& factor) const {
  if (factor.size() != grid_.dims()) refuse("a factor for " + std::to_string(factor.size()) + " dimensions");
  comm::HaloBlock block = block_;
  kernels::TileGrid grid = grid_;
  for (size_t d = 0; d < grid.dims(); ++d) {
    for (int64_t& e : block.dims[d].block_extents) e = scaled(e, factor[d], false, d, "a block extent");
    grid.global[d] = scaled(grid.global[d], factor[d], false, d, "the global extent");
    grid.tile[d] = scaled(grid.tile[d], factor[d], false, d, "the tile");
    grid.block_offset[d] = scaled(grid.block_offset[d], factor[d], false, d, "the block offset");
    grid.block_extent[d] = scaled(grid.block_extent[d], factor[d], false, d, "the block extent");
  }
  return DomainField(channel_, gather_, block, grid);
}

DomainField DomainField::refined(const std::vector<int64_t>& factor) const {
  if (factor.size() != grid_.dims()) refuse("a factor for " + std::to_string(factor.size()) + " dimensions");
  comm::HaloBlock block = block_;
  kernels::TileGrid grid = grid_;
  for (size_t d = 0; d < grid.dims(); ++d) {
    for (int64_t& e : block.dims[d].block_extents) e = scaled(e, factor[d], true, d, "");
    grid.global[d] *= factor[d];
    grid.tile[d] *= factor[d];
    grid.block_offset[d] *= factor[d];
    grid.block_extent[d] *= factor[d];
  }
  return DomainField(channel_, gather_, block, grid);
}

void require_host(const char* op, const char* operand, const kernels::Tensor& tensor) {
  if (tensor.device() != kernels::Device::kHost) {
    throw Error(ErrorCode::kUnsupported, std::string(op) + ": " + operand +
                                             " is a device tensor; the domain ops exchange host memory only");
  }
}

}  // namespace sluice::runtime
