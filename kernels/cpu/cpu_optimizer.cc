// Parameter updates of SGD (momentum) and AdamW.
#include <cmath>

#include "kernels/cpu/cpu_backend.h"

namespace sluice::kernels {

void CpuBackend::sgd_update_impl(const SgdHyper& hyper, const Tensor& grad, Tensor& velocity, Tensor& param) {
  const float* gr = grad.data();
  float* vel = velocity.data();
  float* p = param.data();
  const int64_t n = param.size();
  for (int64_t i = 0; i < n; ++i) {
    const float g = gr[i] + hyper.weight_decay * p[i];
    vel[i] = hyper.momentum * vel[i] + g;
    p[i] -= hyper.lr * vel[i];
  }
}

void CpuBackend::adamw_update_impl(const AdamWHyper& hyper, int64_t step, const Tensor& grad, Tensor& exp_avg,
                                   Tensor& exp_avg_sq, Tensor& param) {
  const double t = static_cast<double>(step);
  const float bias_correction1 = static_cast<float>(1.0 - std::pow(static_cast<double>(hyper.beta1), t));
  const float bias_correction2 = static_cast<float>(1.0 - std::pow(static_cast<double>(hyper.beta2), t));
  const float decay = 1.0f - hyper.lr * hyper.weight_decay;
  const float* gr = grad.data();
  float* m1 = exp_avg.data();
  float* m2 = exp_avg_sq.data();
  float* p = param.data();
  const int64_t n = param.size();
  for (int64_t i = 0; i < n; ++i) {
    const float g = gr[i];
    m1[i] = hyper.beta1 * m1[i] + (1.0f - hyper.beta1) * g;
    m2[i] = hyper.beta2 * m2[i] + (1.0f - hyper.beta2) * g * g;
    const float m_hat = m1[i] / bias_correction1;
    const float v_hat = m2[i] / bias_correction2;
    p[i] = p[i] * decay - hyper.lr * m_hat / (std::sqrt(v_hat) + hyper.eps);
  }
}

}  // namespace sluice::kernels
