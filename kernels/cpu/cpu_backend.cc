#include "kernels/cpu/cpu_backend.h"

#include <algorithm>
#include <string>

#include "core/common/error.h"

namespace sluice::kernels {
namespace {

void require_host(const char* op, const Tensor& tensor) {
  if (tensor.device() != Device::kHost) {
    throw Error(ErrorCode::kInvalidArgument, std::string(op) + ": the CPU backend got a tensor on another device");
  }
}

}  // namespace

Tensor CpuBackend::zeros(int64_t rows, int64_t cols) { return Tensor::host(rows, cols); }

Tensor CpuBackend::empty(int64_t rows, int64_t cols) { return Tensor::host_uninitialized(rows, cols); }

Tensor CpuBackend::from_host(int64_t rows, int64_t cols, const float* values) {
  Tensor tensor = Tensor::host(rows, cols);
  std::copy(values, values + tensor.size(), tensor.data());
  return tensor;
}

void CpuBackend::to_host(const Tensor& tensor, float* values) {
  require_host("to_host", tensor);
  std::copy(tensor.data(), tensor.data() + tensor.size(), values);
}

Backend& cpu_backend() {
  static CpuBackend backend;
  return backend;
}

}  // namespace sluice::kernels
