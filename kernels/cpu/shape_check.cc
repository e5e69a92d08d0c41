#include "kernels/cpu/shape_check.h"

#include <string>

#include "core/common/error.h"

namespace sluice::kernels::cpu_detail {
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

void require_host(const char* op, const Tensor& tensor) {
  if (tensor.device() != Device::kHost) {
    throw Error(ErrorCode::kInvalidArgument, std::string(op) + ": the CPU backend got a tensor on another device");
  }
}

}  // namespace sluice::kernels::cpu_detail
