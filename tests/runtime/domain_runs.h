// Test helpers for the domain-parallel ops (core/runtime/domain_*.h) on 4 MPI ranks: a field split into 4 blocks
// (block b = world rank b), and beside it the undecomposed reference, the same ops on the whole field as ONE block
// over a one-rank channel (MPI_COMM_SELF: halos are local copies, no message). Every rank builds the same global
// fields from fixed seeds, so each rank can cut its own block out of the reference's results and compare bits.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "core/comm/halo_exchange.h"
#include "core/comm/halo_layout.h"
#include "core/comm/tile_gather.h"
#include "core/runtime/domain_field.h"
#include "kernels/tensor.h"
#include "kernels/tile_grid.h"
#include "tests/kernels/split_field.h"
#include "tests/mpi_world.h"

namespace sluice::runtime {

// A field's extents, its canonical tile and its split: per dimension every block's extent (row-major blocks).
struct Split {
  std::vector<int64_t> global;
  std::vector<int64_t> tile;
  std::vector<std::vector<int64_t>> cuts;
};

// One run's side: a channel over `comm`, its gather, and the field of block `block_number` of `cuts`.
class FieldRun {
 public:
  FieldRun(MPI_Comm comm, const Split& split, const std::vector<std::vector<int64_t>>& cuts, int block_number)
      : channel_(comm), gather_(channel_) {
    comm::HaloGrid grid;
    grid.block_extents = cuts;
    grid.halo_low.assign(cuts.size(), 0);
    grid.halo_high.assign(cuts.size(), 0);
    const comm::HaloBlock halo = comm::halo_block_of(grid, 1, 1, block_number, channel_.size());
    block_ = kernels::blocks_of(cuts)[static_cast<size_t>(block_number)];
    field_ = std::make_unique<DomainField>(channel_, gather_, halo,
                                           kernels::TileGrid{split.global, split.tile, block_.offset, block_.extent});
  }
  const DomainField& field() const { return *field_; }
  const kernels::Block& block() const { return block_; }
  comm::HaloChannel& channel() { return channel_; }
  comm::TileGather& gather() { return gather_; }

 private:
  comm::HaloChannel channel_;
  comm::TileGather gather_;
  kernels::Block block_;
  std::unique_ptr<DomainField> field_;
};

// The block `grid` describes, cut out of a whole-field tensor [samples][channels · Π grid.global].
inline kernels::Tensor cut_block(const kernels::Tensor& field, int64_t channels, const kernels::TileGrid& grid) {
  const std::vector<int64_t> none(grid.dims(), 0);
  return kernels::padded_block(field, channels, grid.global, kernels::Block{grid.block_offset, grid.block_extent},
                               none, none);
}

// The split run on MPI_COMM_WORLD (block = world rank) and the whole-field reference on MPI_COMM_SELF.
struct Runs {
  explicit Runs(const Split& s) : split(s), domain(MPI_COMM_WORLD, s, s.cuts, testing::world_rank()) {
    std::vector<std::vector<int64_t>> one;
    for (const int64_t g : s.global) one.push_back({g});
    whole = std::make_unique<FieldRun>(MPI_COMM_SELF, s, one, 0);
  }
  // This rank's block of a whole-field tensor [samples][channels · Π global].
  kernels::Tensor cut(const kernels::Tensor& field, int64_t channels) const {
    return cut_block(field, channels, domain.field().grid());
  }
  Split split;
  FieldRun domain;
  std::unique_ptr<FieldRun> whole;
};

// Bit-for-bit equality, naming the first differing float.
inline void expect_bits(const kernels::Tensor& got, const kernels::Tensor& want, const std::string& what) {
  ASSERT_EQ(got.rows(), want.rows()) << what;
  ASSERT_EQ(got.cols(), want.cols()) << what;
  for (int64_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(got.data() + i, want.data() + i, sizeof(float)) != 0) {
      ADD_FAILURE() << what << ": float " << i << " of " << got.size() << " is " << got.data()[i] << ", the whole "
                    << "field's " << want.data()[i] << " (world rank " << testing::world_rank() << ")";
      return;
    }
  }
}

inline int64_t points_of(const std::vector<int64_t>& extents) {
  return std::accumulate(extents.begin(), extents.end(), int64_t{1}, std::multiplies<int64_t>());
}

}  // namespace sluice::runtime
