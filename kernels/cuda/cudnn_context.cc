#include "kernels/cuda/cudnn_context.h"

#include <string>

#include "core/common/error.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cudnn_check.h"

namespace sluice::kernels {

CudnnContext::CudnnContext(cudaStream_t stream) : stream_(stream) {
  check_cudnn(cudnnCreate(&handle_), "cudnnCreate");
  const cudnnStatus_t status = cudnnSetStream(handle_, stream_);
  if (status != CUDNN_STATUS_SUCCESS) {
    cudnnDestroy(handle_);
    check_cudnn(status, "cudnnSetStream");
  }
}

CudnnContext::~CudnnContext() {
  // Errors are ignored: a destructor cannot throw. The owner drains the stream before this runs.
  if (workspace_ != nullptr) cudaFreeAsync(workspace_, stream_);
  if (handle_ != nullptr) cudnnDestroy(handle_);
}

void* CudnnContext::workspace(size_t bytes) {
  if (bytes > kWorkspaceLimitBytes) {
    throw Error(ErrorCode::kInternal, "cuDNN workspace of " + std::to_string(bytes) + " bytes requested, above the " +
                                          std::to_string(kWorkspaceLimitBytes) + "-byte limit");
  }
  if (bytes <= workspace_bytes_) return workspace_;
  if (workspace_ != nullptr) check_cuda(cudaFreeAsync(workspace_, stream_), "cudaFreeAsync (cuDNN workspace)");
  workspace_ = nullptr;
  workspace_bytes_ = 0;
  check_cuda(cudaMallocAsync(&workspace_, bytes, stream_), "cudaMallocAsync (cuDNN workspace)");
  workspace_bytes_ = bytes;
  return workspace_;
}

const CudnnAlgorithm* CudnnContext::cached(const std::string& key) const {
  const auto found = algorithms_.find(key);
  return found == algorithms_.end() ? nullptr : &found->second;
}

}  // namespace sluice::kernels
