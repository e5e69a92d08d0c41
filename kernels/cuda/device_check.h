// Argument checks of the CUDA ops; each failure names the op, the operand and what was wrong, as the CPU
// backend's do, so a model that fails on one device fails with the same message on the other.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <utility>

#include "kernels/shape_check.h"
#include "kernels/tensor.h"

namespace sluice::kernels::cuda_detail {

using kernels::require_same_shape;
using kernels::require_shape;
// A host tensor passed to a CUDA op would be dereferenced on the device: reject it before the launch.
void require_device(const char* op, const char* operand, const Tensor& tensor);
// require_device for each (operand name, tensor) pair.
void require_devices(const char* op, std::initializer_list<std::pair<const char*, const Tensor*>> operands);

}  // namespace sluice::kernels::cuda_detail
