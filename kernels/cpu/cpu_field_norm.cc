// CpuBackend's normalizations of fields: group norm (per sample and group, over the group's channels × points) and
// layernorm over the channels at each point, as one set of loops. Both normalize "sets" of elements of a sample: set
// s holds elements s·set_stride + k·element_stride for k < size, and the element at offset o belongs to channel
// o / points. Sums are in double, in element order; samples are shared out over the rank's threads (each sample's
// results depend on that sample alone), and the parameter gradients are added up in sample order, so the bits
// depend on neither the thread count nor the split.
#include <cmath>
#include <vector>

#include "kernels/cpu/blas_threads.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/parallel_blocks.h"

namespace sluice::kernels {
namespace {

struct NormSets {
  int64_t sets = 0;            // per sample
  int64_t size = 0;            // elements per set
  int64_t set_stride = 0;
  int64_t element_stride = 0;
  int64_t points = 1;
  int64_t features = 0;        // per sample
  float eps = 0.0f;
  int64_t offset(int64_t s, int64_t k) const { return s * set_stride + k * element_stride; }
};

NormSets group_sets(const NormGeometry& g) {
  const int64_t size = g.channels / g.groups * g.points;
  return {g.groups, size, size, 1, g.points, g.features(), g.eps};
}

NormSets channel_sets(const NormGeometry& g) {
  return {g.points, g.channels, 1, g.points, g.points, g.features(), g.eps};
}

template <typename Body>
void per_sample(int64_t samples, int64_t features, Body&& body) {
  const BlasHeldAtOneThread team;
  // A few passes over each sample's features.
  const int threads = threads_for(team.team_threads(), samples, 4.0 * static_cast<double>(features));
  run_blocks(samples, threads, [&](int64_t n) { body(n); });
}

void norm_forward(const NormSets& t, const Tensor& x, const Tensor& weight, const Tensor& bias, Tensor& y,
                  Tensor& mean, Tensor& rstd) {
  const float* w = weight.data();
  const float* b = bias.data();
  per_sample(x.rows(), x.cols(), [&](int64_t n) {
    const float* in = x.data() + n * t.features;
    float* out = y.data() + n * t.features;
    for (int64_t s = 0; s < t.sets; ++s) {
      double sum = 0.0;
      for (int64_t k = 0; k < t.size; ++k) sum += in[t.offset(s, k)];
      const double mu = sum / static_cast<double>(t.size);
      double squares = 0.0;
      for (int64_t k = 0; k < t.size; ++k) {
        const double d = in[t.offset(s, k)] - mu;
        squares += d * d;
      }
      const float set_mean = static_cast<float>(mu);
      const float set_rstd = static_cast<float>(1.0 / std::sqrt(squares / static_cast<double>(t.size) + t.eps));
      mean.data()[n * t.sets + s] = set_mean;
      rstd.data()[n * t.sets + s] = set_rstd;
      for (int64_t k = 0; k < t.size; ++k) {
        const int64_t o = t.offset(s, k);
        const int64_t c = o / t.points;
        out[o] = w[c] * ((in[o] - set_mean) * set_rstd) + b[c];
      }
    }
  });
}

// dx = rstd · (g − mean(g) − x̂ · mean(g · x̂)) per set, with g = dy · weight[c].
void norm_backward_input(const NormSets& t, const Tensor& dy, const Tensor& x, const Tensor& weight,
                         const Tensor& mean, const Tensor& rstd, Tensor& dx) {
  const float* w = weight.data();
  per_sample(x.rows(), x.cols(), [&](int64_t n) {
    const float* in = x.data() + n * t.features;
    const float* grad = dy.data() + n * t.features;
    float* out = dx.data() + n * t.features;
    for (int64_t s = 0; s < t.sets; ++s) {
      const float set_mean = mean.data()[n * t.sets + s];
      const float set_rstd = rstd.data()[n * t.sets + s];
      double sum_g = 0.0, sum_g_xhat = 0.0;
      for (int64_t k = 0; k < t.size; ++k) {
        const int64_t o = t.offset(s, k);
        const float g = grad[o] * w[o / t.points];
        sum_g += g;
        sum_g_xhat += static_cast<double>(g) * ((in[o] - set_mean) * set_rstd);
      }
      const float mean_g = static_cast<float>(sum_g / static_cast<double>(t.size));
      const float mean_g_xhat = static_cast<float>(sum_g_xhat / static_cast<double>(t.size));
      for (int64_t k = 0; k < t.size; ++k) {
        const int64_t o = t.offset(s, k);
        const float g = grad[o] * w[o / t.points];
        const float xhat = (in[o] - set_mean) * set_rstd;
        out[o] = set_rstd * (g - mean_g - xhat * mean_g_xhat);
      }
    }
  });
}

// Summed in double over samples (in order) and each sample's elements (in order), then added once.
void norm_param_grads(const NormSets& t, const Tensor& dy, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                      Tensor& weight_grad, Tensor& bias_grad) {
  const int64_t channels = weight_grad.cols();
  std::vector<double> weight_sum(static_cast<size_t>(channels)), bias_sum(static_cast<size_t>(channels));
  for (int64_t n = 0; n < x.rows(); ++n) {
    const float* in = x.data() + n * t.features;
    const float* grad = dy.data() + n * t.features;
    for (int64_t s = 0; s < t.sets; ++s) {
      const float set_mean = mean.data()[n * t.sets + s];
      const float set_rstd = rstd.data()[n * t.sets + s];
      for (int64_t k = 0; k < t.size; ++k) {
        const int64_t o = t.offset(s, k);
        const size_t c = static_cast<size_t>(o / t.points);
        weight_sum[c] += static_cast<double>(grad[o]) * ((in[o] - set_mean) * set_rstd);
        bias_sum[c] += grad[o];
      }
    }
  }
  for (int64_t c = 0; c < channels; ++c) {
    weight_grad.data()[c] += static_cast<float>(weight_sum[static_cast<size_t>(c)]);
    bias_grad.data()[c] += static_cast<float>(bias_sum[static_cast<size_t>(c)]);
  }
}

}  // namespace

void CpuBackend::group_norm_forward_impl(const NormGeometry& geometry, const Tensor& x, const Tensor& weight,
                                         const Tensor& bias, Tensor& y, Tensor& mean, Tensor& rstd) {
  norm_forward(group_sets(geometry), x, weight, bias, y, mean, rstd);
}

void CpuBackend::group_norm_backward_input_impl(const NormGeometry& geometry, const Tensor& dy, const Tensor& x,
                                                const Tensor& weight, const Tensor& mean, const Tensor& rstd,
                                                Tensor& dx) {
  norm_backward_input(group_sets(geometry), dy, x, weight, mean, rstd, dx);
}

void CpuBackend::group_norm_accumulate_param_grads_impl(const NormGeometry& geometry, const Tensor& dy,
                                                        const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                                        Tensor& weight_grad, Tensor& bias_grad) {
  norm_param_grads(group_sets(geometry), dy, x, mean, rstd, weight_grad, bias_grad);
}

void CpuBackend::channel_layernorm_forward_impl(const NormGeometry& geometry, const Tensor& x, const Tensor& weight,
                                                const Tensor& bias, Tensor& y, Tensor& mean, Tensor& rstd) {
  norm_forward(channel_sets(geometry), x, weight, bias, y, mean, rstd);
}

void CpuBackend::channel_layernorm_backward_input_impl(const NormGeometry& geometry, const Tensor& dy,
                                                       const Tensor& x, const Tensor& weight, const Tensor& mean,
                                                       const Tensor& rstd, Tensor& dx) {
  norm_backward_input(channel_sets(geometry), dy, x, weight, mean, rstd, dx);
}

void CpuBackend::channel_layernorm_accumulate_param_grads_impl(const NormGeometry& geometry, const Tensor& dy,
                                                               const Tensor& x, const Tensor& mean,
                                                               const Tensor& rstd, Tensor& weight_grad,
                                                               Tensor& bias_grad) {
  norm_param_grads(channel_sets(geometry), dy, x, mean, rstd, weight_grad, bias_grad);
}

}  // namespace sluice::kernels
