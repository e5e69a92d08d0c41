#include "kernels/cuda/cuda_device.h"

#include <cuda_runtime_api.h>

#include "core/common/error.h"

namespace sluice::kernels {

std::string cuda_unavailable_reason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    return std::string("cudaGetDeviceCount failed: ") + cudaGetErrorName(status) + " (" +
           cudaGetErrorString(status) + ")";
  }
  if (count == 0) return "cudaGetDeviceCount returned 0 devices";
  return "";
}

int cuda_device_count() {
  const std::string reason = cuda_unavailable_reason();
  if (!reason.empty()) throw Error(ErrorCode::kCuda, "no CUDA device: " + reason);
  int count = 0;
  cudaGetDeviceCount(&count);
  return count;
}

}  // namespace sluice::kernels
