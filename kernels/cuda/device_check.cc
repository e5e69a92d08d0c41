#include "kernels/cuda/device_check.h"

#include <string>

#include "core/common/error.h"

namespace sluice::kernels::cuda_detail {

void require_device(const char* op, const char* operand, const Tensor& tensor) {
  if (!tensor.empty() && tensor.device() != Device::kCuda) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string(op) + ": " + operand + " is a host tensor; the CUDA backend needs device tensors");
  }
}

void require_devices(const char* op, std::initializer_list<std::pair<const char*, const Tensor*>> operands) {
  for (const auto& [name, tensor] : operands) require_device(op, name, *tensor);
}

}  // namespace sluice::kernels::cuda_detail
