// Whether this process can use a GPU, and why not. Kept apart from CudaBackend so tests and the trainer can
// ask without creating a context.
#pragma once

#include <string>

namespace sluice::kernels {

// Empty when at least one CUDA device is usable; otherwise the reason, e.g. "cudaGetDeviceCount failed:
// cudaErrorInsufficientDriver (CUDA driver version is insufficient for CUDA runtime version)".
std::string cuda_unavailable_reason();

// Number of usable devices; throws Error(kCuda) with cuda_unavailable_reason() when there are none.
int cuda_device_count();

}  // namespace sluice::kernels
