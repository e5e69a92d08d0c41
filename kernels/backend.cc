// Backend's public ops: each checks its arguments (device, then shapes and the op's other rules) once for every
// backend and calls the backend's *_impl. Also the optimizer slot checks and the default list forms of the
// optimizer updates.
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

void require_adamw_step(const char* op, int64_t step) {
  if (step < 1) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string(op) + ": step must be >= 1 (1-based), got " + std::to_string(step));
  }
}

void require_probability(const char* op, float p) {
  if (!(p >= 0.0f && p < 1.0f)) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string(op) + ": dropout probability must be in [0, 1), got " + std::to_string(p));
  }
}

// A per-sample stream's rows must be the tensor's rows, or the mask would not follow the samples.
void require_stream_rows(const char* op, const RngStream& stream, const Tensor& x) {
  if (stream.row_width != 0 && stream.row_width != static_cast<uint64_t>(x.cols())) {
    throw Error(ErrorCode::kInvalidArgument, std::string(op) + ": random stream draws rows of " +
                                                 std::to_string(stream.row_width) + " elements, tensor has " +
                                                 std::to_string(x.cols()) + " columns");
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

void Backend::require_on_device(const char*, const char*, const Tensor&) const {}

void Backend::require_all_on_device(const char* op,
                                    std::initializer_list<std::pair<const char*, const Tensor*>> operands) const {
  for (const auto& [operand, tensor] : operands) require_on_device(op, operand, *tensor);
}

void Backend::gemm(Transpose transpose_a, Transpose transpose_b, float alpha, const Tensor& a, const Tensor& b,
                   float beta, Tensor& c) {
  require_all_on_device("gemm", {{"a", &a}, {"b", &b}, {"c", &c}});
  const bool ta = transpose_a == Transpose::kYes;
  const bool tb = transpose_b == Transpose::kYes;
  const int64_t m = ta ? a.cols() : a.rows();
  const int64_t k = ta ? a.rows() : a.cols();
  const int64_t n = tb ? b.rows() : b.cols();
  require_shape("gemm", "op(b)", b, tb ? n : k, tb ? k : n);
  require_shape("gemm", "c", c, m, n);
  gemm_impl(transpose_a, transpose_b, alpha, a, b, beta, c);
}

void Backend::add_bias(const Tensor& bias, Tensor& y) {
  require_all_on_device("add_bias", {{"bias", &bias}, {"y", &y}});
  require_shape("add_bias", "bias", bias, 1, y.cols());
  add_bias_impl(bias, y);
}

void Backend::accumulate_bias_grad(const Tensor& dy, Tensor& bias_grad) {
  require_all_on_device("accumulate_bias_grad", {{"dy", &dy}, {"bias_grad", &bias_grad}});
  require_shape("accumulate_bias_grad", "bias_grad", bias_grad, 1, dy.cols());
  accumulate_bias_grad_impl(dy, bias_grad);
}

void Backend::activation_forward(Activation activation, const Tensor& x, Tensor& y) {
  require_all_on_device("activation_forward", {{"x", &x}, {"y", &y}});
  require_same_shape("activation_forward", "y", y, x);
  activation_forward_impl(activation, x, y);
}

void Backend::bias_activation_forward(Activation activation, const Tensor& bias, Tensor& pre, Tensor& y) {
  require_all_on_device("bias_activation_forward", {{"bias", &bias}, {"pre", &pre}, {"y", &y}});
  require_shape("bias_activation_forward", "bias", bias, 1, pre.cols());
  require_same_shape("bias_activation_forward", "y", y, pre);
  bias_activation_forward_impl(activation, bias, pre, y);
}

void Backend::activation_backward(Activation activation, const Tensor& saved, const Tensor& dy, Tensor& dx) {
  require_all_on_device("activation_backward", {{"saved", &saved}, {"dy", &dy}, {"dx", &dx}});
  require_same_shape("activation_backward", "dy", dy, saved);
  require_same_shape("activation_backward", "dx", dx, saved);
  activation_backward_impl(activation, saved, dy, dx);
}

void Backend::layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y,
                                Tensor& mean, Tensor& rstd) {
  const char* op = "layernorm_forward";
  require_all_on_device(op,
                        {{"x", &x}, {"gamma", &gamma}, {"beta", &beta}, {"y", &y}, {"mean", &mean}, {"rstd", &rstd}});
  require_shape(op, "gamma", gamma, 1, x.cols());
  require_shape(op, "beta", beta, 1, x.cols());
  require_same_shape(op, "y", y, x);
  require_shape(op, "mean", mean, x.rows(), 1);
  require_shape(op, "rstd", rstd, x.rows(), 1);
  layernorm_forward_impl(x, gamma, beta, eps, y, mean, rstd);
}

void Backend::layernorm_backward_input(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                       const Tensor& rstd, Tensor& dx) {
  const char* op = "layernorm_backward_input";
  require_all_on_device(op, {{"dy", &dy}, {"x", &x}, {"gamma", &gamma}, {"mean", &mean}, {"rstd", &rstd}, {"dx", &dx}});
  require_same_shape(op, "dy", dy, x);
  require_same_shape(op, "dx", dx, x);
  require_shape(op, "gamma", gamma, 1, x.cols());
  require_shape(op, "mean", mean, x.rows(), 1);
  require_shape(op, "rstd", rstd, x.rows(), 1);
  layernorm_backward_input_impl(dy, x, gamma, mean, rstd, dx);
}

void Backend::layernorm_accumulate_param_grads(const Tensor& dy, const Tensor& x, const Tensor& mean,
                                               const Tensor& rstd, Tensor& gamma_grad, Tensor& beta_grad) {
  const char* op = "layernorm_accumulate_param_grads";
  require_all_on_device(op, {{"dy", &dy},
                             {"x", &x},
                             {"mean", &mean},
                             {"rstd", &rstd},
                             {"gamma_grad", &gamma_grad},
                             {"beta_grad", &beta_grad}});
  require_same_shape(op, "dy", dy, x);
  require_shape(op, "mean", mean, x.rows(), 1);
  require_shape(op, "rstd", rstd, x.rows(), 1);
  require_shape(op, "gamma_grad", gamma_grad, 1, x.cols());
  require_shape(op, "beta_grad", beta_grad, 1, x.cols());
  layernorm_accumulate_param_grads_impl(dy, x, mean, rstd, gamma_grad, beta_grad);
}

void Backend::dropout_forward(const Tensor& x, float p, const RngStream& stream, Tensor& y) {
  require_probability("dropout_forward", p);
  require_all_on_device("dropout_forward", {{"x", &x}, {"y", &y}});
  require_same_shape("dropout_forward", "y", y, x);
  require_stream_rows("dropout_forward", stream, x);
  dropout_forward_impl(x, p, stream, y);
}

void Backend::dropout_backward(const Tensor& dy, float p, const RngStream& stream, Tensor& dx) {
  require_probability("dropout_backward", p);
  require_all_on_device("dropout_backward", {{"dy", &dy}, {"dx", &dx}});
  require_same_shape("dropout_backward", "dx", dx, dy);
  require_stream_rows("dropout_backward", stream, dy);
  dropout_backward_impl(dy, p, stream, dx);
}

void Backend::fill(float value, Tensor& x) {
  require_on_device("fill", "x", x);
  fill_impl(value, x);
}

void Backend::fill_uniform(const RngStream& stream, float low, float high, Tensor& x) {
  require_on_device("fill_uniform", "x", x);
  fill_uniform_impl(stream, low, high, x);
}

void Backend::add(const Tensor& a, const Tensor& b, Tensor& out) {
  require_all_on_device("add", {{"a", &a}, {"b", &b}, {"out", &out}});
  require_same_shape("add", "b", b, a);
  require_same_shape("add", "out", out, a);
  add_impl(a, b, out);
}

void Backend::axpy(float alpha, const Tensor& x, Tensor& y) {
  require_all_on_device("axpy", {{"x", &x}, {"y", &y}});
  require_same_shape("axpy", "y", y, x);
  axpy_impl(alpha, x, y);
}

void Backend::scale(float alpha, Tensor& x) {
  require_on_device("scale", "x", x);
  scale_impl(alpha, x);
}

void Backend::copy(const Tensor& source, Tensor& destination) {
  require_all_on_device("copy", {{"source", &source}, {"destination", &destination}});
  require_same_shape("copy", "destination", destination, source);
  copy_impl(source, destination);
}

double Backend::sum_of_squares(const Tensor& x) {
  require_on_device("sum_of_squares", "x", x);
  return sum_of_squares_impl(x);
}

double Backend::mse(const Tensor& pred, const Tensor& target, float grad_scale, Tensor& grad) {
  require_all_on_device("mse", {{"pred", &pred}, {"target", &target}, {"grad", &grad}});
  require_same_shape("mse", "target", target, pred);
  require_same_shape("mse", "grad", grad, pred);
  return mse_impl(pred, target, grad_scale, grad);
}

double Backend::softmax_cross_entropy(const Tensor& logits, const Tensor& target, float grad_scale, Tensor& grad) {
  require_all_on_device("softmax_cross_entropy", {{"logits", &logits}, {"target", &target}, {"grad", &grad}});
  require_same_shape("softmax_cross_entropy", "target", target, logits);
  require_same_shape("softmax_cross_entropy", "grad", grad, logits);
  return softmax_cross_entropy_impl(logits, target, grad_scale, grad);
}

void Backend::sgd_update(const SgdHyper& hyper, const Tensor& grad, Tensor& velocity, Tensor& param) {
  require_all_on_device("sgd_update", {{"grad", &grad}, {"velocity", &velocity}, {"param", &param}});
  require_same_shape("sgd_update", "grad", grad, param);
  require_same_shape("sgd_update", "velocity", velocity, param);
  sgd_update_impl(hyper, grad, velocity, param);
}

void Backend::adamw_update(const AdamWHyper& hyper, int64_t step, const Tensor& grad, Tensor& exp_avg,
                           Tensor& exp_avg_sq, Tensor& param) {
  require_adamw_step("adamw_update", step);
  require_all_on_device("adamw_update",
                        {{"grad", &grad}, {"exp_avg", &exp_avg}, {"exp_avg_sq", &exp_avg_sq}, {"param", &param}});
  require_same_shape("adamw_update", "grad", grad, param);
  require_same_shape("adamw_update", "exp_avg", exp_avg, param);
  require_same_shape("adamw_update", "exp_avg_sq", exp_avg_sq, param);
  adamw_update_impl(hyper, step, grad, exp_avg, exp_avg_sq, param);
}

void Backend::sgd_update_many(const SgdHyper& hyper, const std::vector<SgdSlot>& slots) {
  require_valid_slots("sgd_update_many", device(), slots);
  sgd_update_many_impl(hyper, slots);
}

void Backend::adamw_update_many(const AdamWHyper& hyper, int64_t step, const std::vector<AdamWSlot>& slots) {
  require_adamw_step("adamw_update_many", step);
  require_valid_slots("adamw_update_many", device(), slots);
  adamw_update_many_impl(hyper, step, slots);
}

// The slots are checked: the per-tensor ops' checks would only repeat require_valid_slots.
void Backend::sgd_update_many_impl(const SgdHyper& hyper, const std::vector<SgdSlot>& slots) {
  for (const SgdSlot& slot : slots) sgd_update_impl(hyper, *slot.grad, *slot.velocity, *slot.param);
}

void Backend::adamw_update_many_impl(const AdamWHyper& hyper, int64_t step, const std::vector<AdamWSlot>& slots) {
  for (const AdamWSlot& slot : slots) {
    adamw_update_impl(hyper, step, *slot.grad, *slot.exp_avg, *slot.exp_avg_sq, *slot.param);
  }
}

}  // namespace sluice::kernels
