#include "kernels/cuda/cudnn_check.h"

#include <string>

#include "core/common/error.h"

namespace sluice::kernels {

void check_cudnn(cudnnStatus_t status, const char* what) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  throw Error(ErrorCode::kCuda, std::string(what) + " failed: " + cudnnGetErrorString(status) + " (cuDNN status " +
                                    std::to_string(static_cast<int>(status)) + ")");
}

}  // namespace sluice::kernels
