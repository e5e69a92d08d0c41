// Parameter updates of SGD (momentum) and AdamW.
#include <cmath>
#include <string>

#include "core/common/error.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/shape_check.h"

namespace sluice::kernels {

void CpuBackend::sgd_update(const SgdHyper& hyper, const Tensor& grad, Tensor& velocity, Tensor& param) {
  cpu_detail::require_same_shape("sgd_update", "grad", grad, param);
  cpu_detail::require_same_shape("sgd_update", "velocity", velocity, param);
  for (int64_t i = 0; i < param.size(); ++i) {
    const float g = grad.data()[i] + hyper.weight_decay * param.data()[i];
    velocity.data()[i] = hyper.momentum * velocity.data()[i] + g;
    param.data()[i] -= hyper.lr * velocity.data()[i];
  }
}

void CpuBackend::adamw_update(const AdamWHyper& hyper, int64_t step, const Tensor& grad, Tensor& exp_avg,
                              Tensor& exp_avg_sq, Tensor& param) {
  if (step < 1) {
    throw Error(ErrorCode::kInvalidArgument, "adamw_update: step must be >= 1 (1-based), got " + std::to_string(step));
  }
  cpu_detail::require_same_shape("adamw_update", "grad", grad, param);
  cpu_detail::require_same_shape("adamw_update", "exp_avg", exp_avg, param);
  cpu_detail::require_same_shape("adamw_update", "exp_avg_sq", exp_avg_sq, param);
  const double t = static_cast<double>(step);
  const float bias_correction1 = static_cast<float>(1.0 - std::pow(static_cast<double>(hyper.beta1), t));
  const float bias_correction2 = static_cast<float>(1.0 - std::pow(static_cast<double>(hyper.beta2), t));
  const float decay = 1.0f - hyper.lr * hyper.weight_decay;
  for (int64_t i = 0; i < param.size(); ++i) {
    const float g = grad.data()[i];
    float& m = exp_avg.data()[i];
    float& v = exp_avg_sq.data()[i];
    m = hyper.beta1 * m + (1.0f - hyper.beta1) * g;
    v = hyper.beta2 * v + (1.0f - hyper.beta2) * g * g;
    const float m_hat = m / bias_correction1;
    const float v_hat = v / bias_correction2;
    param.data()[i] = param.data()[i] * decay - hyper.lr * m_hat / (std::sqrt(v_hat) + hyper.eps);
  }
}

}  // namespace sluice::kernels
