#include "kernels/shape_check.h"

#include <string>

#include "core/common/error.h"

namespace sluice::kernels {
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

}  // namespace sluice::kernels
