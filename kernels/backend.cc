// The list forms of the optimizer updates: slot checks shared by every backend, and the default that loops over
// the per-tensor op (so a backend without a multi-tensor kernel, the CPU's, gives exactly its per-tensor bits).
#include "kernels/backend.h"

#include <string>

#include "core/common/error.h"
#include "kernels/shape_check.h"

namespace sluice::kernels {
namespace {

// "<op>: slot <index>", the op name the per-tensor shape checks prefix their messages with.
std::string slot_op(const char* op, size_t index) { return std::string(op) + ": slot " + std::to_string(index); }

const char* device_label(Device device) { return device == Device::kHost ? "host" : "CUDA"; }

// Non-null and on the backend's device (empty tensors have no memory to be on the wrong device), as the
// per-tensor ops require; a wrong-device pointer would otherwise be dereferenced inside a kernel.
void require_operand(const std::string& op, const char* operand, const Tensor* tensor, Device device) {
  if (tensor == nullptr) throw Error(ErrorCode::kInvalidArgument, op + ": " + operand + " is null");
  if (!tensor->empty() && tensor->device() != device) {
    throw Error(ErrorCode::kInvalidArgument, op + ": " + operand + " is a " + device_label(tensor->device()) +
                                                 " tensor; this backend needs " + device_label(device) + " tensors");
  }
}

void require_adamw_step(int64_t step) {
  if (step < 1) {
    throw Error(ErrorCode::kInvalidArgument,
                "adamw_update_many: step must be >= 1 (1-based), got " + std::to_string(step));
  }
}

}  // namespace

void require_valid_slots(const char* op, Device device, const std::vector<SgdSlot>& slots) {
  for (size_t i = 0; i < slots.size(); ++i) {
    const std::string name = slot_op(op, i);
    const SgdSlot& slot = slots[i];
    require_operand(name, "param", slot.param, device);
    require_operand(name, "grad", slot.grad, device);
    require_operand(name, "velocity", slot.velocity, device);
    require_same_shape(name.c_str(), "grad", *slot.grad, *slot.param);
    require_same_shape(name.c_str(), "velocity", *slot.velocity, *slot.param);
  }
}

void require_valid_slots(const char* op, Device device, const std::vector<AdamWSlot>& slots) {
  for (size_t i = 0; i < slots.size(); ++i) {
    const std::string name = slot_op(op, i);
    const AdamWSlot& slot = slots[i];
    require_operand(name, "param", slot.param, device);
    require_operand(name, "grad", slot.grad, device);
    require_operand(name, "exp_avg", slot.exp_avg, device);
    require_operand(name, "exp_avg_sq", slot.exp_avg_sq, device);
    require_same_shape(name.c_str(), "grad", *slot.grad, *slot.param);
    require_same_shape(name.c_str(), "exp_avg", *slot.exp_avg, *slot.param);
    require_same_shape(name.c_str(), "exp_avg_sq", *slot.exp_avg_sq, *slot.param);
  }
}

void Backend::sgd_update_many(const SgdHyper& hyper, const std::vector<SgdSlot>& slots) {
  require_valid_slots("sgd_update_many", device(), slots);
  for (const SgdSlot& slot : slots) sgd_update(hyper, *slot.grad, *slot.velocity, *slot.param);
}

void Backend::adamw_update_many(const AdamWHyper& hyper, int64_t step, const std::vector<AdamWSlot>& slots) {
  require_adamw_step(step);
  require_valid_slots("adamw_update_many", device(), slots);
  for (const AdamWSlot& slot : slots) {
    adamw_update(hyper, step, *slot.grad, *slot.exp_avg, *slot.exp_avg_sq, *slot.param);
  }
}

}  // namespace sluice::kernels
