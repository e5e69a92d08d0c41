// HostStaging for device memory on one CUDA stream: pinned host buffers (device <-> host copies from pageable
// memory go through a driver bounce buffer at a fraction of the speed) and copies queued on the backend's
// compute stream, so they are ordered after the kernels that produced the data and before those that use it.
//
// Pinned buffers are cached for reuse: cudaMallocHost/cudaFreeHost cost tens of milliseconds for a 128 MiB
// message (page locking) and both synchronise the device implicitly, while a training step stages the same few
// message sizes every micro-batch. A buffer handed out by allocate() goes back to a free list when its
// StagingBuffer is destroyed (see the .cc for why that is the moment it is safe to reuse) and is pinned again
// only when the cache cannot supply one of a fitting size.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "kernels/host_staging.h"

namespace sluice::kernels {

class CudaHostStaging : public HostStaging {
 public:
  // Bytes of idle pinned memory the cache may keep (per CudaHostStaging, i.e. per rank): 1 GiB. A returned buffer
  // that would take the idle total above it is freed instead. See the .cc for the sizing.
  static constexpr size_t kMaxCachedBytes = size_t{1} << 30;

  // `stream` is the backend's compute stream; it must outlive this object.
  explicit CudaHostStaging(cudaStream_t stream);
  // Frees the cached buffers. Buffers still held by requests are freed when those requests release them.
  ~CudaHostStaging() override;
  CudaHostStaging(const CudaHostStaging&) = delete;
  CudaHostStaging& operator=(const CudaHostStaging&) = delete;

  // A cached buffer of at least `count` floats (and at most twice that) if there is one, else a freshly pinned one.
  std::unique_ptr<StagingBuffer> allocate(int64_t count) override;
  // Queued on the stream, then the stream is synchronised: MPI reads the host buffer on the host, so the copy
  // must be done, not just queued (this also waits for the kernels that produced the source).
  void copy_to_host(const float* device_source, float* host_destination, int64_t count) override;
  // Synchronised too: the caller frees the host buffer right after (it belongs to a finished request).
  void copy_to_device(const float* host_source, float* device_destination, int64_t count) override;

  // Idle pinned bytes in the cache now (for tests and diagnostics).
  size_t cached_bytes() const;

  class Cache;  // the free list; shared with the buffers handed out, which may outlive this object

 private:
  // check_cuda that first poisons the cache on failure (see the .cc).
  void checked(cudaError_t status, const char* what);

  cudaStream_t stream_;
  std::shared_ptr<Cache> cache_;
};

}  // namespace sluice::kernels
