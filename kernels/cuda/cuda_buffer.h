// Device memory behind a Tensor. Allocation and release are stream-ordered (cudaMallocAsync/cudaFreeAsync on
// the backend's compute stream) from the device's default memory pool, whose release threshold CudaBackend
// raises so freed blocks are cached and reused instead of going back to the driver on every step.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>

#include "kernels/tensor.h"

namespace sluice::kernels {

class CudaBuffer : public Buffer {
 public:
  // `count` floats, ordered on `stream`: zero-initialised, or (zero_filled = false) left as allocated for an
  // output that is written in full before it is read.
  CudaBuffer(size_t count, cudaStream_t stream, bool zero_filled = true);
  ~CudaBuffer() override;
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;

  float* data() override { return data_; }
  Device device() const override { return Device::kCuda; }
  // A device-to-device copy on the same stream (Tensor's copy constructor deep-copies).
  std::unique_ptr<Buffer> clone() const override;

 private:
  float* data_ = nullptr;
  size_t count_ = 0;
  cudaStream_t stream_ = nullptr;
};

}  // namespace sluice::kernels
