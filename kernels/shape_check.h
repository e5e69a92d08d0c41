// Operand shape checks every backend's ops share; each failure names the op, the operand and both shapes.
// Device checks (host vs CUDA memory) stay with the backend that needs them.
#pragma once

#include <cstdint>

#include "kernels/tensor.h"

namespace sluice::kernels {

void require_shape(const char* op, const char* operand, const Tensor& tensor, int64_t rows, int64_t cols);
void require_same_shape(const char* op, const char* operand, const Tensor& tensor, const Tensor& reference);

}  // namespace sluice::kernels
