// Turns CUDA runtime and cuBLAS status codes into sluice::Error(kCuda) naming the call that failed, so a
// GPU failure reaches the C API as SLUICE_ERR_CUDA with a readable reason instead of an abort.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

namespace sluice::kernels {

void check_cuda(cudaError_t status, const char* what);
void check_cublas(cublasStatus_t status, const char* what);

}  // namespace sluice::kernels
