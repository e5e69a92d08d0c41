#include "kernels/cuda/cuda_check.h"

#include <string>

#include "core/common/error.h"

namespace sluice::kernels {

void check_cuda(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  throw Error(ErrorCode::kCuda, std::string(what) + " failed: " + cudaGetErrorName(status) + " (" +
                                    cudaGetErrorString(status) + ")");
}

void check_cublas(cublasStatus_t status, const char* what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw Error(ErrorCode::kCuda, std::string(what) + " failed: " + cublasGetStatusName(status) + " (" +
                                    cublasGetStatusString(status) + ")");
}

}  // namespace sluice::kernels
