// Transport and Group over MPI for host memory.
#pragma once

#include <mpi.h>

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

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
};

class MpiGroup : public Group {
 public:
  explicit MpiGroup(MPI_Comm comm);
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::unique_ptr<Request> start_ordered_sum(float* data, int64_t count) override;
  void ordered_sum(double* data, int64_t count) override;
  std::vector<double> all_gather(const double* data, int64_t count) override;
  bool any(bool flag) override;
  void barrier() override;

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace sluice::comm
