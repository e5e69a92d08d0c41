#include "kernels/cuda/cuda_host_staging.h"

#include "kernels/cuda/cuda_check.h"

namespace sluice::kernels {
namespace {

class PinnedBuffer : public StagingBuffer {
 public:
  explicit PinnedBuffer(int64_t count) {
    if (count > 0) {
      check_cuda(cudaMallocHost(reinterpret_cast<void**>(&data_), static_cast<size_t>(count) * sizeof(float)),
                 "cudaMallocHost (staging buffer)");
    }
  }
  ~PinnedBuffer() override {
    if (data_ != nullptr) cudaFreeHost(data_);  // cannot throw from a destructor; a failure here leaks
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  float* data() override { return data_; }

 private:
  float* data_ = nullptr;
};

}  // namespace

std::unique_ptr<StagingBuffer> CudaHostStaging::allocate(int64_t count) { return std::make_unique<PinnedBuffer>(count); }

void CudaHostStaging::copy_to_host(const float* device_source, float* host_destination, int64_t count) {
  if (count <= 0) return;
  check_cuda(cudaMemcpyAsync(host_destination, device_source, static_cast<size_t>(count) * sizeof(float),
                             cudaMemcpyDeviceToHost, stream_),
             "cudaMemcpyAsync (staging, device to host)");
  check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (staging, device to host)");
}

void CudaHostStaging::copy_to_device(const float* host_source, float* device_destination, int64_t count) {
  if (count <= 0) return;
  check_cuda(cudaMemcpyAsync(device_destination, host_source, static_cast<size_t>(count) * sizeof(float),
                             cudaMemcpyHostToDevice, stream_),
             "cudaMemcpyAsync (staging, host to device)");
  check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (staging, host to device)");
}

}  // namespace sluice::kernels
