// CpuBackend's group norm in pieces, for statistics formed per canonical tile of a split field
// (kernels/tiled_norm.h): a tile's partial sums, and the normalization and dx with statistics given. The formulas
// and roundings are cpu_field_norm.cc's; sums are in double, a group's elements in order, samples shared out over
// the rank's threads (each sample's results depend on that sample alone), so no bit depends on the thread count.
#include <cmath>
#include <vector>

#include "kernels/cpu/blas_threads.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/parallel_blocks.h"

namespace sluice::kernels {
namespace {

// Group s of a sample holds its elements s · size .. (s + 1) · size − 1; the element at offset o is in channel
// o / points.
struct Groups {
  int64_t groups = 0;
  int64_t size = 0;
  int64_t points = 0;
  int64_t features = 0;
};

Groups groups_of(const NormGeometry& g) { return {g.groups, g.channels / g.groups * g.points, g.points, g.features()}; }

template <typename Body>
void per_sample(int64_t samples, int64_t features, Body&& body) {
  const BlasHeldAtOneThread team;
  const int threads = threads_for(team.team_threads(), samples, 2.0 * static_cast<double>(features));
  run_blocks(samples, threads, [&](int64_t n) { body(n); });
}

}  // namespace

std::vector<double> CpuBackend::group_norm_partial_sums_impl(const NormGeometry& geometry, const Tensor& x) {
  const Groups t = groups_of(geometry);
  std::vector<double> sums(static_cast<size_t>(x.rows() * t.groups * 2));
  per_sample(x.rows(), x.cols(), [&](int64_t n) {
    for (int64_t s = 0; s < t.groups; ++s) {
      const float* in = x.data() + n * t.features + s * t.size;
      double sum = 0.0;
      for (int64_t k = 0; k < t.size; ++k) sum += in[k];
      const double mu = sum / static_cast<double>(t.size);
      double squares = 0.0;
      for (int64_t k = 0; k < t.size; ++k) {
        const double d = in[k] - mu;
        squares += d * d;
      }
      const size_t slot = static_cast<size_t>((n * t.groups + s) * 2);
      sums[slot] = sum;
      sums[slot + 1] = squares;
    }
  });
  return sums;
}

void CpuBackend::group_norm_normalize_impl(const NormGeometry& geometry, const Tensor& x, const Tensor& weight,
                                           const Tensor& bias, const Tensor& mean, const Tensor& rstd, Tensor& y) {
  const Groups t = groups_of(geometry);
  const float* w = weight.data();
  const float* b = bias.data();
  per_sample(x.rows(), x.cols(), [&](int64_t n) {
    for (int64_t s = 0; s < t.groups; ++s) {
      const float set_mean = mean.data()[n * t.groups + s];
      const float set_rstd = rstd.data()[n * t.groups + s];
      const int64_t first = s * t.size;
      const float* in = x.data() + n * t.features;
      float* out = y.data() + n * t.features;
      for (int64_t o = first; o < first + t.size; ++o) {
        const int64_t c = o / t.points;
        out[o] = w[c] * ((in[o] - set_mean) * set_rstd) + b[c];
      }
    }
  });
}

std::vector<double> CpuBackend::group_norm_backward_partial_sums_impl(const NormGeometry& geometry, const Tensor& dy,
                                                                      const Tensor& x, const Tensor& weight,
                                                                      const Tensor& mean, const Tensor& rstd) {
  const Groups t = groups_of(geometry);
  const float* w = weight.data();
  std::vector<double> sums(static_cast<size_t>(x.rows() * t.groups * 2));
  per_sample(x.rows(), x.cols(), [&](int64_t n) {
    const float* in = x.data() + n * t.features;
    const float* grad = dy.data() + n * t.features;
    for (int64_t s = 0; s < t.groups; ++s) {
      const float set_mean = mean.data()[n * t.groups + s];
      const float set_rstd = rstd.data()[n * t.groups + s];
      double sum_g = 0.0, sum_g_xhat = 0.0;
      for (int64_t o = s * t.size; o < (s + 1) * t.size; ++o) {
        const float g = grad[o] * w[o / t.points];
        sum_g += g;
        sum_g_xhat += static_cast<double>(g) * ((in[o] - set_mean) * set_rstd);
      }
      const size_t slot = static_cast<size_t>((n * t.groups + s) * 2);
      sums[slot] = sum_g;
      sums[slot + 1] = sum_g_xhat;
    }
  });
  return sums;
}

void CpuBackend::group_norm_backward_with_sums_impl(const NormGeometry& geometry, const Tensor& dy, const Tensor& x,
                                                    const Tensor& weight, const Tensor& mean, const Tensor& rstd,
                                                    const Tensor& mean_g, const Tensor& mean_g_xhat, Tensor& dx) {
  const Groups t = groups_of(geometry);
  const float* w = weight.data();
  per_sample(x.rows(), x.cols(), [&](int64_t n) {
    const float* in = x.data() + n * t.features;
    const float* grad = dy.data() + n * t.features;
    float* out = dx.data() + n * t.features;
    for (int64_t s = 0; s < t.groups; ++s) {
      const int64_t stat = n * t.groups + s;
      const float set_mean = mean.data()[stat], set_rstd = rstd.data()[stat];
      const float group_mean_g = mean_g.data()[stat], group_mean_g_xhat = mean_g_xhat.data()[stat];
      for (int64_t o = s * t.size; o < (s + 1) * t.size; ++o) {
        const float g = grad[o] * w[o / t.points];
        const float xhat = (in[o] - set_mean) * set_rstd;
        out[o] = set_rstd * (g - group_mean_g - xhat * group_mean_g_xhat);
      }
    }
  });
}

}  // namespace sluice::kernels
