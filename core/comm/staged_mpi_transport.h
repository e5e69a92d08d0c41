// Transport for device tensors through host memory: device -> host, MPI, host -> device. For hosts where
// several ranks share one GPU (NCCL refuses that) or NCCL is absent: a 4-rank pipeline on a one-GPU machine.
// Each request owns a pinned host staging buffer, so the caller's device buffer follows the Transport
// contract unchanged. Copies use cudaMemcpyDefault, so host pointers also work (they are just copied).
#pragma once

#include <cuda_runtime_api.h>
#include <mpi.h>

#include "core/comm/transport.h"

namespace sluice::comm {

class StagedMpiTransport : public Transport {
 public:
  // `compute_stream` is where the device buffers are produced and consumed (CudaBackend::stream()).
  StagedMpiTransport(MPI_Comm comm, cudaStream_t compute_stream);
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  // Copies `data` to the host (waiting for the compute stream), then starts MPI_Isend from the copy.
  std::unique_ptr<Request> isend(const float* data, int64_t count, int peer, int tag) override;
  // Starts MPI_Irecv into a host buffer; completion copies it to `data` on the compute stream.
  std::unique_ptr<Request> irecv(float* data, int64_t count, int peer, int tag) override;

 private:
  MPI_Comm comm_;
  cudaStream_t compute_stream_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace sluice::comm
