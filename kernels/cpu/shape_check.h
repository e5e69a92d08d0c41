// Shape checks shared by the CPU kernels; each failure names the op, the operand and both shapes.
#pragma once

#include <cstdint>

#include "kernels/tensor.h"

namespace sluice::kernels::cpu_detail {

void require_shape(const char* op, const char* operand, const Tensor& tensor, int64_t rows, int64_t cols);
void require_same_shape(const char* op, const char* operand, const Tensor& tensor, const Tensor& reference);
void require_host(const char* op, const Tensor& tensor);

}  // namespace sluice::kernels::cpu_detail
