// CudaBackend's losses and optimizer updates: argument checks here, kernels in loss.cu and optimizer.cu.
#include <cmath>
#include <string>

#include "core/common/error.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_launch.h"
#include "kernels/cuda/device_check.h"

namespace sluice::kernels {

using cuda_detail::require_device;
using cuda_detail::require_devices;

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
  if (step < 1) {
    throw Error(ErrorCode::kInvalidArgument, "adamw_update: step must be >= 1 (1-based), got " + std::to_string(step));
  }
  require_devices("adamw_update",
                  {{"grad", &grad}, {"exp_avg", &exp_avg}, {"exp_avg_sq", &exp_avg_sq}, {"param", &param}});
  require_same_shape("adamw_update", "grad", grad, param);
  require_same_shape("adamw_update", "exp_avg", exp_avg, param);
  require_same_shape("adamw_update", "exp_avg_sq", exp_avg_sq, param);
  // Computed exactly as the CPU path computes them (double pow, then rounded to float).
  const double t = static_cast<double>(step);
  const float bias_correction1 = static_cast<float>(1.0 - std::pow(static_cast<double>(hyper.beta1), t));
  const float bias_correction2 = static_cast<float>(1.0 - std::pow(static_cast<double>(hyper.beta2), t));
  cuda_launch::adamw_update(hyper, bias_correction1, bias_correction2, grad.data(), exp_avg.data(),
                            exp_avg_sq.data(), param.data(), param.size(), stream_);
}

}  // namespace sluice::kernels
