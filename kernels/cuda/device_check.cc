#include "kernels/cuda/device_check.h"

#include <string>

#include "core/common/error.h"

namespace sluice::kernels::cuda_detail {
namespace {

std::string shape_text(int64_t rows, int64_t cols) {
  return "[" + std::to_string(rows) + "][" + std::to_string(cols) + "]";
}

}  // namespace

void require_shape(const char* op, const char* operand, const Tensor& tensor, int64_t rows, int64_t cols) {
  if (tensor.rows() != rows || tensor.cols() != cols) {
    throw Error(ErrorCode::kInvalidArgument, std::string(op) + ": " + operand + " has shape " +
                                                 shape_text(tensor.rows(), tensor.cols()) + ", expected " +
                                                 shape_text(rows, cols));
  }
}

void require_same_shape(const char* op, const char* operand, const Tensor& tensor, const Tensor& reference) {
  require_shape(op, operand, tensor, reference.rows(), reference.cols());
}

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
