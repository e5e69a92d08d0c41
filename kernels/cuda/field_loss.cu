// Cross-entropy at every point of a field (Backend::channel_softmax_cross_entropy): one thread per (sample, point)
// runs the CPU's point_cross_entropy (kernels/cpu/cpu_loss.cc) over the channels in the same order, so the
// gradient is the CPU's up to the device's exp/log; the points' losses are added by deterministic_sum (a fixed
// tree: the same bits every run, the CPU's sum to rounding).
#include "kernels/cuda/deterministic_sum.cuh"
#include "kernels/cuda/field_launch.h"
#include "kernels/cuda/launch_config.cuh"

namespace sluice::kernels::cuda_launch {
namespace {

__global__ void channel_ce_kernel(const float* logits, const float* target, float grad_scale, float* grad,
                                  double* point_loss, int64_t rows, int64_t channels, int64_t points) {
  SLUICE_GRID_STRIDE(i, rows * points) {
    const int64_t base = (i / points) * channels * points + i % points;
    const float* z = logits + base;
    const float* t = target + base;
    float* g = grad + base;
    float max_logit = z[0];
    for (int64_t c = 1; c < channels; ++c) {  // std::max's rule, NaN included: keep the first unless it is less
      const float v = z[c * points];
      max_logit = max_logit < v ? v : max_logit;
    }
    double sum_exp = 0.0;
    for (int64_t c = 0; c < channels; ++c) sum_exp += exp(static_cast<double>(z[c * points] - max_logit));
    const double log_sum_exp = log(sum_exp);
    double loss = 0.0;
    double target_mass = 0.0;
    for (int64_t c = 0; c < channels; ++c) {
      loss -= t[c * points] * (static_cast<double>(z[c * points] - max_logit) - log_sum_exp);
      target_mass += t[c * points];
    }
    for (int64_t c = 0; c < channels; ++c) {
      const double softmax = exp(static_cast<double>(z[c * points] - max_logit) - log_sum_exp);
      g[c * points] = grad_scale * static_cast<float>(softmax * target_mass - t[c * points]);
    }
    point_loss[i] = loss;
  }
}

struct PointLossTerm {
  const double* point_loss;
  __device__ double operator()(int64_t i) const { return point_loss[i]; }
};

}  // namespace

double channel_softmax_cross_entropy(const float* logits, const float* target, float grad_scale, float* grad,
                                     int64_t rows, int64_t channels, int64_t points, cudaStream_t stream) {
  const int64_t n = rows * points;
  if (n == 0 || channels == 0) return 0.0;
  double* point_loss = nullptr;
  check_cuda(cudaMallocAsync(reinterpret_cast<void**>(&point_loss), n * sizeof(double), stream),
             "cudaMallocAsync (per-point cross-entropy losses)");
  channel_ce_kernel<<<blocks_for(n), kThreads, 0, stream>>>(logits, target, grad_scale, grad, point_loss, rows,
                                                            channels, points);
  check_launch("channel_ce_kernel");
  const double total = deterministic_sum(PointLossTerm{point_loss}, n, stream, "per-point cross-entropy sum");
  check_cuda(cudaFreeAsync(point_loss, stream), "cudaFreeAsync (per-point cross-entropy losses)");
  return total;
}

}  // namespace sluice::kernels::cuda_launch
