#include "kernels/tensor.h"

#include <algorithm>
#include <new>
#include <string>

#include "core/common/checked_math.h"
#include "core/common/error.h"

namespace sluice::kernels {

Tensor::Tensor(int64_t rows, int64_t cols, std::unique_ptr<Buffer> buffer)
    : rows_(rows), cols_(cols), buffer_(std::move(buffer)), data_(buffer_ ? buffer_->data() : nullptr) {
  if (rows < 0 || cols < 0) {
    throw Error(ErrorCode::kInvalidArgument,
                "tensor shape must be non-negative, got [" + std::to_string(rows) + "][" + std::to_string(cols) + "]");
  }
  const int64_t elements = checked_mul(rows, cols, "tensor element count");
  if (elements > 0 && !buffer_) {
    throw Error(ErrorCode::kInvalidArgument, "tensor of " + std::to_string(elements) + " elements has no buffer");
  }
}

namespace {

void require_non_negative_shape(int64_t rows, int64_t cols) {
  if (rows < 0 || cols < 0) {
    throw Error(ErrorCode::kInvalidArgument,
                "tensor shape must be non-negative, got [" + std::to_string(rows) + "][" + std::to_string(cols) + "]");
  }
}

// A host buffer for a [rows][cols] tensor. A size that wraps or memory that is not there becomes an error naming
// the shape and the bytes asked for: a bare std::bad_alloc reaching the host says nothing about which size was
// too big (kInvalidArgument: the C API's "a bad size").
std::unique_ptr<HostBuffer> host_buffer(int64_t rows, int64_t cols, bool zero_filled) {
  require_non_negative_shape(rows, cols);
  const int64_t elements = checked_mul(rows, cols, "tensor element count");
  const int64_t bytes = checked_float_bytes(elements, "tensor bytes");
  try {
    return std::make_unique<HostBuffer>(static_cast<size_t>(elements), zero_filled);
  } catch (const std::bad_alloc&) {
    throw Error(ErrorCode::kInvalidArgument, "out of memory: a [" + std::to_string(rows) + "][" +
                                                 std::to_string(cols) + "] float tensor needs " +
                                                 std::to_string(bytes) + " bytes");
  }
}

}  // namespace

Tensor Tensor::host(int64_t rows, int64_t cols) { return Tensor(rows, cols, host_buffer(rows, cols, true)); }

Tensor Tensor::host_uninitialized(int64_t rows, int64_t cols) {
  return Tensor(rows, cols, host_buffer(rows, cols, false));
}

Tensor Tensor::host_from(int64_t rows, int64_t cols, const std::vector<float>& values) {
  require_non_negative_shape(rows, cols);
  const int64_t elements = checked_mul(rows, cols, "tensor element count");
  if (static_cast<int64_t>(values.size()) != elements) {
    throw Error(ErrorCode::kInvalidArgument, "tensor [" + std::to_string(rows) + "][" + std::to_string(cols) +
                                                 "] needs " + std::to_string(elements) + " values, got " +
                                                 std::to_string(values.size()));
  }
  Tensor tensor = host(rows, cols);
  std::copy(values.begin(), values.end(), tensor.data());
  return tensor;
}

Tensor::Tensor(const Tensor& other)
    : rows_(other.rows_),
      cols_(other.cols_),
      buffer_(other.buffer_ ? other.buffer_->clone() : nullptr),
      data_(buffer_ ? buffer_->data() : nullptr) {}

Tensor& Tensor::operator=(const Tensor& other) {
  if (this != &other) {
    rows_ = other.rows_;
    cols_ = other.cols_;
    buffer_ = other.buffer_ ? other.buffer_->clone() : nullptr;
    data_ = buffer_ ? buffer_->data() : nullptr;
  }
  return *this;
}

Tensor::Tensor(Tensor&& other) noexcept
    : rows_(other.rows_), cols_(other.cols_), buffer_(std::move(other.buffer_)), data_(other.data_) {
  other.rows_ = 0;
  other.cols_ = 0;
  other.data_ = nullptr;
}

Tensor& Tensor::operator=(Tensor&& other) noexcept {
  if (this != &other) {
    rows_ = other.rows_;
    cols_ = other.cols_;
    buffer_ = std::move(other.buffer_);
    data_ = other.data_;
    other.rows_ = 0;
    other.cols_ = 0;
    other.data_ = nullptr;
  }
  return *this;
}

std::vector<float> Tensor::to_vector() const {
  if (empty()) return {};
  return std::vector<float>(data(), data() + size());
}

}  // namespace sluice::kernels
