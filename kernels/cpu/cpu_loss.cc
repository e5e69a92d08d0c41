// Loss values and their gradients w.r.t. the model output. Scaling to a batch mean is the caller's job
// (core/model/loss), passed in as grad_scale.
#include <algorithm>
#include <cmath>

#include "kernels/cpu/cpu_backend.h"

namespace sluice::kernels {

double CpuBackend::mse_impl(const Tensor& pred, const Tensor& target, float grad_scale, Tensor& grad) {
  double sum = 0.0;
  for (int64_t i = 0; i < pred.size(); ++i) {
    const float diff = pred.data()[i] - target.data()[i];
    sum += static_cast<double>(diff) * diff;
    grad.data()[i] = grad_scale * 2.0f * diff;
  }
  return sum;
}

double CpuBackend::softmax_cross_entropy_impl(const Tensor& logits, const Tensor& target, float grad_scale,
                                              Tensor& grad) {
  const int64_t cols = logits.cols();
  double total = 0.0;
  for (int64_t r = 0; r < logits.rows(); ++r) {
    const float* z = logits.data() + r * cols;
    const float* t = target.data() + r * cols;
    float* g = grad.data() + r * cols;
    // Subtracting the row max keeps exp() from overflowing; log-sum-exp in double for accuracy.
    const float max_logit = *std::max_element(z, z + cols);
    double sum_exp = 0.0;
    for (int64_t c = 0; c < cols; ++c) sum_exp += std::exp(static_cast<double>(z[c] - max_logit));
    const double log_sum_exp = std::log(sum_exp);
    double target_mass = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      const double log_softmax = static_cast<double>(z[c] - max_logit) - log_sum_exp;
      total -= t[c] * log_softmax;
      target_mass += t[c];
    }
    for (int64_t c = 0; c < cols; ++c) {
      const double softmax = std::exp(static_cast<double>(z[c] - max_logit) - log_sum_exp);
      g[c] = grad_scale * static_cast<float>(softmax * target_mass - t[c]);
    }
  }
  return total;
}

}  // namespace sluice::kernels
