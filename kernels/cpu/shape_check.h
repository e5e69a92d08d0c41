// Operand checks of the CPU kernels: the shared shape checks plus "this tensor is in host memory".
#pragma once

#include <cstdint>

#include "kernels/shape_check.h"
#include "kernels/tensor.h"

namespace sluice::kernels::cpu_detail {

using kernels::require_same_shape;
using kernels::require_shape;
void require_host(const char* op, const Tensor& tensor);

}  // namespace sluice::kernels::cpu_detail
