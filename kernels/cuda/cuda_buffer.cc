#include "kernels/cuda/cuda_buffer.h"

#include "kernels/cuda/cuda_check.h"

namespace sluice::kernels {

CudaBuffer::CudaBuffer(size_t count, cudaStream_t stream, bool zero_filled) : count_(count), stream_(stream) {
  if (count_ == 0) return;
  void* raw = nullptr;
  check_cuda(cudaMallocAsync(&raw, count_ * sizeof(float), stream_), "cudaMallocAsync (tensor)");
  data_ = static_cast<float*>(raw);
  if (zero_filled) {
    check_cuda(cudaMemsetAsync(data_, 0, count_ * sizeof(float), stream_), "cudaMemsetAsync (tensor zeros)");
  }
}

CudaBuffer::~CudaBuffer() {
  // Stream-ordered: kernels already queued on the stream that read this memory still see it. A destructor
  // cannot throw, and a failure here means the context is already broken, which the next checked call reports.
  if (data_ != nullptr) cudaFreeAsync(data_, stream_);
}

std::unique_ptr<Buffer> CudaBuffer::clone() const {
  auto copy = std::make_unique<CudaBuffer>(count_, stream_, false);
  if (count_ > 0) {
    check_cuda(cudaMemcpyAsync(copy->data_, data_, count_ * sizeof(float), cudaMemcpyDeviceToDevice, stream_),
               "cudaMemcpyAsync (tensor clone)");
  }
  return copy;
}

}  // namespace sluice::kernels
