// Turns cuDNN status codes into sluice::Error(kCuda) naming the call that failed, as cuda_check.h does for the CUDA
// runtime and cuBLAS, so a cuDNN failure reaches the C API as SLUICE_ERR_CUDA with the call and cuDNN's reason.
#pragma once

#include <cudnn.h>

namespace sluice::kernels {

void check_cudnn(cudnnStatus_t status, const char* what);

}  // namespace sluice::kernels
