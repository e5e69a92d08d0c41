// Loss values and their gradients w.r.t. the model output. Scaling to a batch mean is the caller's job
// (core/model/loss), passed in as grad_scale.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/blas_threads.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/parallel_blocks.h"

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

namespace {

// One point of a field: its channels sit `stride` floats apart. The same formulas as a row above; returns the
// point's −Σ_c t_c log softmax(z)_c.
double point_cross_entropy(const float* z, const float* t, float* g, int64_t channels, int64_t stride,
                           float grad_scale) {
  float max_logit = z[0];
  for (int64_t c = 1; c < channels; ++c) max_logit = std::max(max_logit, z[c * stride]);
  double sum_exp = 0.0;
  for (int64_t c = 0; c < channels; ++c) sum_exp += std::exp(static_cast<double>(z[c * stride] - max_logit));
  const double log_sum_exp = std::log(sum_exp);
  double loss = 0.0;
  double target_mass = 0.0;
  for (int64_t c = 0; c < channels; ++c) {
    loss -= t[c * stride] * (static_cast<double>(z[c * stride] - max_logit) - log_sum_exp);
    target_mass += t[c * stride];
  }
  for (int64_t c = 0; c < channels; ++c) {
    const double softmax = std::exp(static_cast<double>(z[c * stride] - max_logit) - log_sum_exp);
    g[c * stride] = grad_scale * static_cast<float>(softmax * target_mass - t[c * stride]);
  }
  return loss;
}

}  // namespace

double CpuBackend::channel_softmax_cross_entropy_impl(int64_t channels, const Tensor& logits, const Tensor& target,
                                                      float grad_scale, Tensor& grad) {
  const int64_t features = logits.cols();
  const int64_t points = features / channels;
  // Each sample's sum depends on that sample alone (points in order); the samples' sums are added in order after
  // the team is done, so neither the thread count nor the split changes a bit.
  std::vector<double> sample_sums(static_cast<size_t>(logits.rows()), 0.0);
  const BlasHeldAtOneThread team;
  // Two exponentials and a few multiply-adds per element.
  const int threads = threads_for(team.team_threads(), logits.rows(), 40.0 * static_cast<double>(features));
  run_blocks(logits.rows(), threads, [&](int64_t n) {
    const int64_t offset = n * features;
    double sum = 0.0;
    for (int64_t p = 0; p < points; ++p) {
      sum += point_cross_entropy(logits.data() + offset + p, target.data() + offset + p, grad.data() + offset + p,
                                 channels, points, grad_scale);
    }
    sample_sums[static_cast<size_t>(n)] = sum;
  });
  double total = 0.0;
  for (double s : sample_sums) total += s;
  return total;
}

}  // namespace sluice::kernels
