// The halo exchange of a domain-decomposed field (issue 32): each rank holds one block of every sample
// (halo_layout.h) and a layer that looks at neighbouring points (a convolution, a pool) needs the block padded
// with its neighbours' edge points, wrapping periodically across the global edges, or, on a side that lies on a
// global edge when the layout says so, with zeros (HaloSide::kZeros: a conv's zero padding) or the block's own
// points mirrored (kReflect: reflect padding); no message crosses such a side.
//
// halo_fill exchanges dimension by dimension, slowest first: the strips of dimension d span the halos already
// filled in dimensions before d, so edges and corners arrive without diagonal messages (per split dimension one
// message to and one from each of the two neighbours; none for a dimension of one block, which copies locally).
// The two neighbours must run the same sequence of fills and adjoints with the same widths, each of them on its
// own block; messages of successive calls match in call order (MPI keeps the order per peer and tag).
//
// halo_adjoint is its backward: the gradient of each halo point goes back to the rank whose interior point it
// copied and is added there, dimension by dimension in reverse order. The order of additions is fixed, so the
// result does not depend on message timing: at dimension d (last to first), every interior point that is the
// source of halo points adds, to its own value, first what comes back from its low neighbour (that rank's high
// halo), then what comes back from its high neighbour (that rank's low halo); a point that feeds both (a block
// narrower than l + h) gets both additions in that order.
//
// Every message travels on a private duplicate of the domain group's communicator (so tags cannot collide with
// the pipeline's traffic) and every wait is comm::wait_for (request_wait.h) under comm.timeout: a neighbour that
// does not take part gives Error(kTimeout) naming the operation, the dimension and the neighbour's world rank.
// A rank further away does not name the silent one but the neighbour that stopped answering because it timed
// out itself; the runtime's closing agreement names the silent rank for all (docs/WAITING.md).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/comm/halo_layout.h"

namespace sluice::comm {

// What halo calls sent (local copies count nothing).
struct HaloTraffic {
  int64_t bytes_sent = 0;
  int64_t messages_sent = 0;
  std::vector<int64_t> bytes_to_rank;  // per rank of the channel's communicator: the bytes on each link
};

// A domain group's private communicator for halo exchanges, and the byte counters.
class HaloChannel {
 public:
  // Collective over `domain_comm` (duplicates it within comm.timeout; duplicate_comm.h). The ranks a HaloBlock
  // names are ranks of `domain_comm`.
  explicit HaloChannel(MPI_Comm domain_comm);
  ~HaloChannel();
  HaloChannel(const HaloChannel&) = delete;
  HaloChannel& operator=(const HaloChannel&) = delete;

  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  // What the latest halo_fill / halo_adjoint sent, and every call's since the channel was made.
  const HaloTraffic& last_call() const { return last_; }
  const HaloTraffic& totals() const { return totals_; }
  // "world rank 5" for a rank of comm(), for messages.
  const std::string& world_rank_text(int rank) const { return world_ranks_[static_cast<size_t>(rank)]; }

  // For halo_exchange.cc: a new call starts; a message of `bytes` to `peer` was posted.
  void begin_call();
  void count_send(int peer, int64_t bytes);

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  HaloTraffic last_;
  HaloTraffic totals_;
  std::vector<std::string> world_ranks_;  // index: rank of comm_
};

// Writes the padded block ([samples][channels][l1+e1+h1 ..], halo_layout.h) into `padded`: the interior from
// `block` ([samples][channels][e1 ..], contiguous), the halos from the neighbours' edges (periodic; zeros or the
// mirror on the layout's closed sides). Point to point with the neighbours `layout` names, who must call it with the
// same widths and their own blocks. Throws
// Error(kInvalidArgument) before any message for a layout check_halo_block refuses, Error(kTimeout) naming the
// dimension and the neighbour when one does not answer within comm.timeout, Error(kComm) for an MPI error.
void halo_fill(HaloChannel& channel, const HaloBlock& layout, const float* block, float* padded);

// The adjoint of halo_fill: from the gradient with respect to the padded block, writes the gradient with
// respect to the block into `block_gradient` (every halo point's gradient added onto the interior point it was
// copied from, on whichever rank owns it, in the order the header comment fixes). Same errors as halo_fill.
void halo_adjoint(HaloChannel& channel, const HaloBlock& layout, const float* padded_gradient,
                  float* block_gradient);

}  // namespace sluice::comm
