// Transport and Group over MPI for host memory.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/comm/collectives.h"
#include "core/comm/transport.h"

namespace sluice::comm {

class MpiTransport : public Transport {
 public:
  explicit MpiTransport(MPI_Comm comm);
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::unique_ptr<Request> isend(const float* data, int64_t count, int peer, int tag) override;
  std::unique_ptr<Request> irecv(float* data, int64_t count, int peer, int tag) override;
  // Matched by tag, completed in any order: receives posted early only hold their buffers longer.
  bool receives_may_be_posted_early() const override { return true; }
  // MPI_TAG_UB: the same on every process for the whole run.
  int max_tag() const override { return max_tag_; }

 private:
  std::string world_rank(int peer) const;  // "world rank 3", for messages

  MPI_Comm comm_;
  std::vector<std::string> world_ranks_;  // index: rank of comm_
  int rank_ = 0;
  int size_ = 1;
  int max_tag_ = 32767;
};

// Private communicator and start-order queue shared by a group's in-flight ordered sums (mpi_transport.cc).
class OrderedSumChannel;

class MpiGroup : public Group {
 public:
  // Largest float count one MPI collective call may cover: counts and displacements are ints.
  static constexpr int64_t kMaxFloatsPerExchange = std::numeric_limits<int>::max();

  // Collective over `comm` (duplicates it for the ordered sums). `max_floats_per_exchange` caps the floats one
  // reduce-scatter/all-gather pair covers; larger sums are split into several. Only tests lower it, to reach
  // the splitting without multi-GiB buffers.
  explicit MpiGroup(MPI_Comm comm, int64_t max_floats_per_exchange = kMaxFloatsPerExchange);
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  // Ordered sum costing about 2 x count floats of traffic and count floats of extra memory per rank: a
  // reduce-scatter (MPI_Ialltoallv, each rank adds its slice in rank order) then an MPI_Iallgatherv. test()
  // starts the all-gather once the slice is summed; wait() finishes both. Bit-identical to gathering every
  // rank's vector and adding in rank order. Every rank must pass the same count.
  std::unique_ptr<Request> start_ordered_sum(float* data, int64_t count) override;
  void ordered_sum(double* data, int64_t count) override;
  std::vector<double> all_gather(const double* data, int64_t count) override;
  std::vector<std::string> gather_text(const std::string& mine, int root) override;
  void broadcast(float* data, int64_t count, int root) override;
  bool any(bool flag) override;
  void barrier() override;

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
  int64_t max_floats_per_exchange_;
  std::string peers_;  // "world ranks 0, 2": whom this rank's collectives wait for, for messages
  std::shared_ptr<OrderedSumChannel> ordered_sums_;  // null when size_ == 1: nothing to exchange
};

}  // namespace sluice::comm
