#include "kernels/cpu/shape_check.h"

#include <string>

#include "core/common/error.h"

namespace sluice::kernels::cpu_detail {

void require_host(const char* op, const Tensor& tensor) {
  if (tensor.device() != Device::kHost) {
    throw Error(ErrorCode::kInvalidArgument, std::string(op) + ": the CPU backend got a tensor on another device");
  }
}

}  // namespace sluice::kernels::cpu_detail
