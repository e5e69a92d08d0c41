#include "kernels/cuda/cuda_host_staging.h"

#include <map>
#include <mutex>
#include <utility>

#include "kernels/cuda/cuda_check.h"

namespace sluice::kernels {

// Why a buffer may be reused once its StagingBuffer is destroyed (the only way back into the free list):
// - MPI is done with it. comm::StagedRequest (core/comm/staged_transport.cc) owns the buffer and destroys its
//   host request first (declared after the buffer): a finished send or receive has completed in MPI; an
//   unfinished receive is cancelled and waited for (MPI_Cancel + MPI_Wait in ~MpiRequest); an unfinished send
//   cannot be cancelled, so ~StagedRequest release()s the buffer instead of destroying it: that PinnedBuffer's
//   destructor never runs, so its memory never returns to this list (it is leaked, as before the cache). A
//   request whose host request never started (a copy or the post threw) never gave the buffer to MPI.
// - No device copy still reads or writes it: copy_to_host and copy_to_device synchronise the stream before they
//   return, so a copy has finished before MPI sees the buffer (send) and before the request is finished (receive).
//   If a copy or its synchronisation fails, whether it finished is unknown: the cache is then poisoned and every
//   buffer returned afterwards is freed, as before the cache, never handed out again.
// The buffers are host memory used by the host only between those points, so handing one to the next message
// needs no further synchronisation.
//
// Sizing: a buffer enters the list when its request ends and leaves it at the next allocate() it fits, so in a
// steady schedule the list holds at most the peak number of messages that were in flight at once, of the sizes the
// schedule uses (a few activation and gradient shapes per stage). kMaxCachedBytes (1 GiB per rank) holds e.g. eight
// 128 MiB messages (8192 x 4096 floats) while bounding the page-locked memory idle per rank, which the OS can
// neither swap nor give to others (4 ranks sharing a node: at most 4 GiB). When message sizes change, stale sizes
// would otherwise pile up: a returned buffer that would take the idle total over the bound evicts the least recently
// returned idle buffers first, and one larger than the whole bound is simply freed.
class CudaHostStaging::Cache {
 public:
  // A pinned block of at least `bytes` (> 0): an idle one with bytes <= capacity <= 2 * bytes (the smallest such),
  // else a new one. Returns the block and its capacity.
  std::pair<float*, size_t> take(size_t bytes) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      const auto it = idle_.lower_bound(bytes);
      if (it != idle_.end() && it->first - bytes <= bytes) {
        const std::pair<float*, size_t> block{it->second.data, it->first};
        idle_bytes_ -= it->first;
        idle_.erase(it);
        return block;
      }
    }
    float* data = nullptr;
    cudaError_t status = cudaMallocHost(reinterpret_cast<void**>(&data), bytes);
    if (status == cudaErrorMemoryAllocation && cached_bytes() > 0) {
      // Out of pinnable memory: give the idle buffers back and try once more. The error is not sticky; clearing
      // it keeps it out of the next kernel's launch check (cudaGetLastError).
      static_cast<void>(cudaGetLastError());
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        free_idle_locked();
      }
      status = cudaMallocHost(reinterpret_cast<void**>(&data), bytes);
    }
    check_cuda(status, "cudaMallocHost (staging buffer)");
    return {data, bytes};
  }

  // From a buffer's destructor: never throws, failures of cudaFreeHost are ignored (a leak at worst).
  void give_back(float* data, size_t capacity) noexcept {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (closed_ || poisoned_ || capacity > kMaxCachedBytes) {
      cudaFreeHost(data);
      return;
    }
    while (idle_bytes_ + capacity > kMaxCachedBytes) evict_oldest();
    idle_.emplace(capacity, Idle{data, ++clock_});
    idle_bytes_ += capacity;
  }

  // A copy failed: buffers returned from now on may still be in a DMA's reach, so none is reused.
  void poison() noexcept {
    const std::lock_guard<std::mutex> lock(mutex_);
    poisoned_ = true;
  }

  // ~CudaHostStaging: frees the idle buffers; buffers returned later are freed at once.
  void close() noexcept {
    const std::lock_guard<std::mutex> lock(mutex_);
    free_idle_locked();
    closed_ = true;
  }

  size_t cached_bytes() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return idle_bytes_;
  }

 private:
  struct Idle {
    float* data;
    uint64_t returned_at;  // order of give_back calls, for eviction
  };

  // mutex_ held.
  void free_idle_locked() noexcept {
    for (const auto& entry : idle_) cudaFreeHost(entry.second.data);
    idle_.clear();
    idle_bytes_ = 0;
  }

  // mutex_ held; idle_ not empty (idle_bytes_ > 0 whenever the caller's loop runs).
  void evict_oldest() noexcept {
    auto oldest = idle_.begin();
    for (auto it = idle_.begin(); it != idle_.end(); ++it) {
      if (it->second.returned_at < oldest->second.returned_at) oldest = it;
    }
    cudaFreeHost(oldest->second.data);
    idle_bytes_ -= oldest->first;
    idle_.erase(oldest);
  }

  mutable std::mutex mutex_;
  std::multimap<size_t, Idle> idle_;  // by capacity in bytes
  size_t idle_bytes_ = 0;
  uint64_t clock_ = 0;
  bool closed_ = false;
  bool poisoned_ = false;
};

namespace {

class PinnedBuffer : public StagingBuffer {
 public:
  // Holds no memory until adopt(): a count of 0 stays that way (data() is null, as before the cache).
  explicit PinnedBuffer(std::shared_ptr<CudaHostStaging::Cache> cache) : cache_(std::move(cache)) {}
  void adopt(std::pair<float*, size_t> block) {
    data_ = block.first;
    capacity_ = block.second;
  }
  ~PinnedBuffer() override {
    if (data_ != nullptr) cache_->give_back(data_, capacity_);
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  float* data() override { return data_; }

 private:
  std::shared_ptr<CudaHostStaging::Cache> cache_;  // kept alive by every buffer, past ~CudaHostStaging if need be
  float* data_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace

CudaHostStaging::CudaHostStaging(cudaStream_t stream) : stream_(stream), cache_(std::make_shared<Cache>()) {}

CudaHostStaging::~CudaHostStaging() { cache_->close(); }

size_t CudaHostStaging::cached_bytes() const { return cache_->cached_bytes(); }

void CudaHostStaging::checked(cudaError_t status, const char* what) {
  if (status != cudaSuccess) cache_->poison();
  check_cuda(status, what);
}

std::unique_ptr<StagingBuffer> CudaHostStaging::allocate(int64_t count) {
  auto buffer = std::make_unique<PinnedBuffer>(cache_);  // first, so that the block has an owner at once
  if (count > 0) buffer->adopt(cache_->take(static_cast<size_t>(count) * sizeof(float)));
  return buffer;
}

void CudaHostStaging::copy_to_host(const float* device_source, float* host_destination, int64_t count) {
  if (count <= 0) return;
  const size_t bytes = static_cast<size_t>(count) * sizeof(float);
  checked(cudaMemcpyAsync(host_destination, device_source, bytes, cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpyAsync (staging, device to host)");
  checked(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (staging, device to host)");
}

void CudaHostStaging::copy_to_device(const float* host_source, float* device_destination, int64_t count) {
  if (count <= 0) return;
  const size_t bytes = static_cast<size_t>(count) * sizeof(float);
  checked(cudaMemcpyAsync(device_destination, host_source, bytes, cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyAsync (staging, host to device)");
  checked(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (staging, host to device)");
}

}  // namespace sluice::kernels
