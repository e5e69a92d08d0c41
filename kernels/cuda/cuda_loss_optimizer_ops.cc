// CudaBackend's losses and optimizer updates: argument checks here, kernels in loss.cu and optimizer.cu.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/common/error.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_launch.h"
#include "kernels/cuda/device_check.h"

namespace sluice::kernels {

using cuda_detail::require_device;
using cuda_detail::require_devices;

namespace {

void require_adamw_step(const char* op, int64_t step) {
  if (step < 1) {
    throw Error(ErrorCode::kInvalidArgument, std::string(op) + ": step must be >= 1 (1-based), got " +
                                                 std::to_string(step));
  }
}

// (1 - beta1^step, 1 - beta2^step), computed exactly as the CPU path computes them: double pow, rounded to float.
using BiasCorrections = std::pair<float, float>;
BiasCorrections bias_corrections(const AdamWHyper& hyper, int64_t step) {
  const double t = static_cast<double>(step);
  return {static_cast<float>(1.0 - std::pow(static_cast<double>(hyper.beta1), t)),
          static_cast<float>(1.0 - std::pow(static_cast<double>(hyper.beta2), t))};
}

}  // namespace

double CudaBackend::mse(const Tensor& pred, const Tensor& target, float grad_scale, Tensor& grad) {
  require_devices("mse", {{"pred", &pred}, {"target", &target}, {"grad", &grad}});
  require_same_shape("mse", "target", target, pred);
  require_same_shape("mse", "grad", grad, pred);
  return cuda_launch::mse(pred.data(), target.data(), grad_scale, grad.data(), pred.size(), stream_);
}

double CudaBackend::softmax_cross_entropy(const Tensor& logits, const Tensor& target, float grad_scale,
                                          Tensor& grad) {
  require_devices("softmax_cross_entropy", {{"logits", &logits}, {"target", &target}, {"grad", &grad}});
  require_same_shape("softmax_cross_entropy", "target", target, logits);
  require_same_shape("softmax_cross_entropy", "grad", grad, logits);
  return cuda_launch::softmax_cross_entropy(logits.data(), target.data(), grad_scale, grad.data(), logits.rows(),
                                            logits.cols(), stream_);
}

void CudaBackend::sgd_update(const SgdHyper& hyper, const Tensor& grad, Tensor& velocity, Tensor& param) {
  require_devices("sgd_update", {{"grad", &grad}, {"velocity", &velocity}, {"param", &param}});
  require_same_shape("sgd_update", "grad", grad, param);
  require_same_shape("sgd_update", "velocity", velocity, param);
  cuda_launch::sgd_update(hyper, grad.data(), velocity.data(), param.data(), param.size(), stream_);
}

void CudaBackend::adamw_update(const AdamWHyper& hyper, int64_t step, const Tensor& grad, Tensor& exp_avg,
                               Tensor& exp_avg_sq, Tensor& param) {
  require_adamw_step("adamw_update", step);
  require_devices("adamw_update",
                  {{"grad", &grad}, {"exp_avg", &exp_avg}, {"exp_avg_sq", &exp_avg_sq}, {"param", &param}});
  require_same_shape("adamw_update", "grad", grad, param);
  require_same_shape("adamw_update", "exp_avg", exp_avg, param);
  require_same_shape("adamw_update", "exp_avg_sq", exp_avg_sq, param);
  const BiasCorrections corrections = bias_corrections(hyper, step);
  cuda_launch::adamw_update(hyper, corrections.first, corrections.second, grad.data(), exp_avg.data(),
                            exp_avg_sq.data(), param.data(), param.size(), stream_);
}

void CudaBackend::sgd_update_many(const SgdHyper& hyper, const std::vector<SgdSlot>& slots) {
  require_valid_slots("sgd_update_many", Device::kCuda, slots);
  std::vector<cuda_launch::SgdTensor> tensors;
  tensors.reserve(slots.size());
  for (const SgdSlot& slot : slots) {
    tensors.push_back({slot.grad->data(), slot.velocity->data(), slot.param->data(), slot.param->size()});
  }
  cuda_launch::sgd_update_many(hyper, tensors, stream_);
}

void CudaBackend::adamw_update_many(const AdamWHyper& hyper, int64_t step, const std::vector<AdamWSlot>& slots) {
  require_adamw_step("adamw_update_many", step);
  require_valid_slots("adamw_update_many", Device::kCuda, slots);
  std::vector<cuda_launch::AdamWTensor> tensors;
  tensors.reserve(slots.size());
  for (const AdamWSlot& slot : slots) {
    tensors.push_back({slot.grad->data(), slot.exp_avg->data(), slot.exp_avg_sq->data(), slot.param->data(),
                       slot.param->size()});
  }
  const BiasCorrections corrections = bias_corrections(hyper, step);
  cuda_launch::adamw_update_many(hyper, corrections.first, corrections.second, tensors, stream_);
}

}  // namespace sluice::kernels
