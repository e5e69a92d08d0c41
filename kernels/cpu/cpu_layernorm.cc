// LayerNorm over the feature axis (each row normalised on its own). Row statistics are accumulated in double
// so that wide rows do not lose precision.
#include <cmath>

#include "kernels/cpu/cpu_backend.h"

namespace sluice::kernels {

void CpuBackend::layernorm_forward_impl(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y,
                                        Tensor& mean, Tensor& rstd) {
  const int64_t rows = x.rows();
  const int64_t cols = x.cols();
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x.data() + r * cols;
    double sum = 0.0;
    for (int64_t c = 0; c < cols; ++c) sum += in[c];
    const double mu = sum / static_cast<double>(cols);
    double squares = 0.0;
    for (int64_t c = 0; c < cols; ++c) squares += (in[c] - mu) * (in[c] - mu);
    const float row_mean = static_cast<float>(mu);
    const float row_rstd = static_cast<float>(1.0 / std::sqrt(squares / static_cast<double>(cols) + eps));
    mean.data()[r] = row_mean;
    rstd.data()[r] = row_rstd;
    float* out = y.data() + r * cols;
    for (int64_t c = 0; c < cols; ++c) {
      out[c] = gamma.data()[c] * ((in[c] - row_mean) * row_rstd) + beta.data()[c];
    }
  }
}

void CpuBackend::layernorm_backward_input_impl(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                               const Tensor& mean, const Tensor& rstd, Tensor& dx) {
  const int64_t rows = x.rows();
  const int64_t cols = x.cols();
  // dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * gamma
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x.data() + r * cols;
    const float* grad = dy.data() + r * cols;
    const float row_mean = mean.data()[r];
    const float row_rstd = rstd.data()[r];
    double sum_g = 0.0;
    double sum_g_xhat = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      const float g = grad[c] * gamma.data()[c];
      const float xhat = (in[c] - row_mean) * row_rstd;
      sum_g += g;
      sum_g_xhat += static_cast<double>(g) * xhat;
    }
    const float mean_g = static_cast<float>(sum_g / static_cast<double>(cols));
    const float mean_g_xhat = static_cast<float>(sum_g_xhat / static_cast<double>(cols));
    float* out = dx.data() + r * cols;
    for (int64_t c = 0; c < cols; ++c) {
      const float g = grad[c] * gamma.data()[c];
      const float xhat = (in[c] - row_mean) * row_rstd;
      out[c] = row_rstd * (g - mean_g - xhat * mean_g_xhat);
    }
  }
}

void CpuBackend::layernorm_accumulate_param_grads_impl(const Tensor& dy, const Tensor& x, const Tensor& mean,
                                                       const Tensor& rstd, Tensor& gamma_grad, Tensor& beta_grad) {
  const int64_t rows = x.rows();
  const int64_t cols = x.cols();
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x.data() + r * cols;
    const float* grad = dy.data() + r * cols;
    for (int64_t c = 0; c < cols; ++c) {
      const float xhat = (in[c] - mean.data()[r]) * rstd.data()[r];
      gamma_grad.data()[c] += grad[c] * xhat;
      beta_grad.data()[c] += grad[c];
    }
  }
}

}  // namespace sluice::kernels
