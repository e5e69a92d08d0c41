// What a halo exchange (halo_exchange.h) needs to know about one rank's block of a domain-decomposed field, and
// how to derive it from the block grid that every rank of the domain group shares.
//
// A field block is [samples][channels][e1..ek] (k = 1..3 spatial dimensions, C order, last extent fastest); its
// padded form is [samples][channels][l1+e1+h1 ..] with halos of width l (low side) and h (high side) per
// dimension. The block grid wraps periodically, so every block has a low and a high neighbour in each dimension;
// a dimension split into one block is its own neighbour (the halo is a local copy, no message). What fills each
// side is data (HaloSide): the neighbour's edge (the periodic wrap), or, on a side that lies on the field's global
// edge, zeros (a conv's zero padding: no message crosses that edge, and its gradient is dropped).
//
// Every check here is decided from data all ranks of the group share (the extents of every block along each
// dimension and the halo widths), so either every rank refuses a layout or none does: no rank can wait for a
// neighbour that refused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sluice::comm {

// What fills one side of a block's halo.
enum class HaloSide {
  kNeighbour,  // the neighbouring block's edge points (across a global edge: the periodic wrap)
  kZeros,      // zeros, no message (only on a side on the field's global edge; the halo gradient there is dropped)
  kReflect,    // the block's own points mirrored about its edge point (PyTorch's reflect: the edge point not
               // repeated), no message (only on a global edge; the adjoint adds the halo gradient onto the mirror)
};

// One spatial dimension of this rank's block.
struct HaloDimension {
  std::vector<int64_t> block_extents;  // the extent of every block along this dimension, in block order
  int block = 0;                       // this rank's position along it (index into block_extents)
  int64_t halo_low = 0;                // points filled below the block's first point (same on every rank)
  int64_t halo_high = 0;               // points filled above its last point (same on every rank)
  int low_rank = 0;                    // rank (in the exchange's communicator) of the block at block - 1 (periodic)
  int high_rank = 0;                   // rank of the block at block + 1 (periodic)
  HaloSide fill_low = HaloSide::kNeighbour;   // what fills the low halo (kZeros, kReflect: block 0 only)
  HaloSide fill_high = HaloSide::kNeighbour;  // what fills the high halo (kZeros, kReflect: the last block only)

  int64_t extent() const { return block_extents[static_cast<size_t>(block)]; }
  int64_t padded_extent() const { return halo_low + extent() + halo_high; }
  bool single_block() const { return block_extents.size() == 1; }
};

// This rank's block: what halo_fill / halo_adjoint read and write.
struct HaloBlock {
  int64_t samples = 1;
  int64_t channels = 1;
  std::vector<HaloDimension> dims;  // 1 to 3 spatial dimensions, slowest first

  int64_t block_floats() const;   // samples x channels x e1 x .. x ek
  int64_t padded_floats() const;  // samples x channels x (l1+e1+h1) x ..
};

// Refuses a block that cannot be exchanged, with Error(kInvalidArgument) naming the spatial dimension (1-based)
// and the numbers: no or more than 3 dimensions, samples/channels/extents < 1, negative halo widths, a block
// index outside the grid, a neighbour rank outside [0, comm_size), a single-block dimension whose neighbours are
// not `my_rank`, a split dimension whose neighbour is `my_rank`, a message over 2^31-1 floats, and a halo wider
// than the smallest block along its dimension (a halo may reach only into the neighbouring block), a kZeros or
// kReflect side that is not on the field's global edge, a one-block dimension whose two sides differ, a kReflect
// side on a block not wider than its halo (the mirror needs width + 1 points: block and widths named).
void check_halo_block(const HaloBlock& block, int comm_size, int my_rank);

// The block grid a domain group shares.
struct HaloGrid {
  std::vector<std::vector<int64_t>> block_extents;  // per spatial dimension: every block's extent along it
  std::vector<int64_t> halo_low;                    // per spatial dimension
  std::vector<int64_t> halo_high;                   // per spatial dimension
  // Rank of each block, blocks numbered row-major over the grid (last dimension fastest). Empty: block b is rank
  // base_rank + b.
  std::vector<int> ranks;
  int base_rank = 0;
};

// This rank's HaloBlock for block number `block_number` (row-major) of `grid`, refused as check_halo_block
// refuses (plus a grid whose per-dimension lists differ in length, a rank table of the wrong size, or a rank
// that appears twice).
HaloBlock halo_block_of(const HaloGrid& grid, int64_t samples, int64_t channels, int block_number, int comm_size);

// `extent` points split into `blocks` near-equal blocks, the first extent % blocks one point larger (the
// convention `sluice train` uses, like MPI_Dims/PETSc). Refused (kInvalidArgument) if blocks < 1 or > extent.
std::vector<int64_t> even_block_extents(int64_t extent, int blocks);

// Sets the sides of `block` that lie on the field's global edges (low side of block 0, high side of the last
// block, per dimension) to `edge`; the other sides exchange with their neighbours. Every rank of the group must
// call it with the same `edge`, so both ends of a link across a global edge skip it.
void set_global_edge_fill(HaloBlock& block, HaloSide edge);

// Bytes this rank sends in one halo_fill of `block` (halo_adjoint sends as many in total, split differently
// between the two neighbours when l != h): what the exchange's counters will report, for estimates on paper. A
// kZeros or kReflect side sends and receives nothing.
int64_t halo_bytes_per_fill(const HaloBlock& block);

}  // namespace sluice::comm
