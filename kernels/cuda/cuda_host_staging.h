// HostStaging for device memory on one CUDA stream: pinned host buffers (device <-> host copies from pageable
// memory go through a driver bounce buffer at a fraction of the speed) and copies queued on the backend's
// compute stream, so they are ordered after the kernels that produced the data and before those that use it.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/host_staging.h"

namespace sluice::kernels {

class CudaHostStaging : public HostStaging {
 public:
  // `stream` is the backend's compute stream; it must outlive this object.
  explicit CudaHostStaging(cudaStream_t stream) : stream_(stream) {}
  std::unique_ptr<StagingBuffer> allocate(int64_t count) override;
  // Queued on the stream, then the stream is synchronised: MPI reads the host buffer on the host, so the copy
  // must be done, not just queued (this also waits for the kernels that produced the source).
  void copy_to_host(const float* device_source, float* host_destination, int64_t count) override;
  // Synchronised too: the caller frees the host buffer right after (it belongs to a finished request).
  void copy_to_device(const float* host_source, float* device_destination, int64_t count) override;

 private:
  cudaStream_t stream_;
};

}  // namespace sluice::kernels
