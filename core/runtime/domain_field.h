// One rank's block of a domain-split field at one resolution level, as the domain-parallel ops see it (issue 32;
// docs/DOMAIN.md "Domain-parallel ops"): where the block sits in the block grid (its neighbours, for halo fills:
// core/comm/halo_layout.h), its canonical tiles (kernels/tile_grid.h), and the group's halo channel and tile gather
// (core/comm). The undecomposed run is the same object with one block (a 1 x .. x 1 grid on a one-rank channel):
// halos are local copies and the gather a copy, so both runs take the same code path.
#pragma once

#include <cstdint>
#include <vector>

#include "core/comm/halo_exchange.h"
#include "core/comm/halo_layout.h"
#include "core/comm/tile_gather.h"
#include "kernels/tensor.h"
#include "kernels/tile_grid.h"

namespace sluice::runtime {

class DomainField {
 public:
  // `block`: this rank's place in the block grid (its samples, channels and halo widths are ignored: each op sets
  // its own); `grid`: the block's tiling. Error(kInvalidArgument) "domain field: ..." naming the dimension when they
  // do not describe the same block (dimension count, extents, offsets, the global extent), or as
  // check_halo_block / check_tile_grid refuse.
  DomainField(comm::HaloChannel& channel, comm::TileGather& gather, const comm::HaloBlock& block,
              const kernels::TileGrid& grid);

  const kernels::TileGrid& grid() const { return grid_; }
  comm::HaloChannel& channel() const { return channel_; }
  comm::TileGather& gather() const { return gather_; }

  // The block [samples][channels · Π block] padded by low/high points per dimension from the neighbours (one
  // halo fill: messages to and from both neighbours of each split dimension). `edge`: what fills the sides on the
  // field's global edges (kNeighbour: the periodic wrap; kZeros: zeros; kReflect: the block's own points mirrored;
  // no message across those two). Host tensors only.
  kernels::Tensor padded(const kernels::Tensor& block, int64_t channels, const std::vector<int64_t>& low,
                         const std::vector<int64_t>& high,
                         comm::HaloSide edge = comm::HaloSide::kNeighbour) const;

  // The same block at a level whose extents are these divided by `factor` per dimension (after a pool or a
  // stride-`factor` down-sampling), and multiplied by it (after an upsampling or a stride = kernel transposed
  // conv): every block extent, offset and tile scaled. Refused (kInvalidArgument) when a block extent or the tile
  // is not divisible by the factor.
  DomainField coarsened(const std::vector<int64_t>& factor) const;
  DomainField refined(const std::vector<int64_t>& factor) const;

 private:
  comm::HaloChannel& channel_;
  comm::TileGather& gather_;
  comm::HaloBlock block_;
  kernels::TileGrid grid_;
};

// Throws Error(kUnsupported) naming `op` and `operand` unless `tensor` lives in host memory: the halo exchange and
// the tile gather read and write host floats (a GPU halo exchange may follow).
void require_host(const char* op, const char* operand, const kernels::Tensor& tensor);

}  // namespace sluice::runtime
