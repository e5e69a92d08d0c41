// The summation order and why it is the same on both paths: layernorm_rows.h.
#include "kernels/cpu/layernorm_rows.h"

#include <cmath>

#include "kernels/cpu/avx512_lanes.h"

namespace sluice::kernels::layernorm_rows {
namespace {

constexpr int kPartials = 16;

// The fixed tree over the sixteen partial sums (both paths end here).
double combine_partials(const double* p) {
  double eight[8], four[4];
  for (int i = 0; i < 8; ++i) eight[i] = p[i] + p[i + 8];
  for (int i = 0; i < 4; ++i) four[i] = eight[i] + eight[i + 4];
  return (four[0] + four[2]) + (four[1] + four[3]);
}

// ---- Portable path: sixteen scalar partials, element c into partial c % 16.

void forward_row_portable(int64_t n, const float* x, const float* gamma, const float* beta, float eps, float* y,
                          float* mean, float* rstd) {
  double p[kPartials] = {};
  for (int64_t c = 0; c < n; ++c) p[c % kPartials] += x[c];
  const double mu = combine_partials(p) / static_cast<double>(n);
  double q[kPartials] = {};
  for (int64_t c = 0; c < n; ++c) q[c % kPartials] += (x[c] - mu) * (x[c] - mu);
  const float row_mean = static_cast<float>(mu);
  const float row_rstd = static_cast<float>(1.0 / std::sqrt(combine_partials(q) / static_cast<double>(n) + eps));
  *mean = row_mean;
  *rstd = row_rstd;
  for (int64_t c = 0; c < n; ++c) y[c] = gamma[c] * ((x[c] - row_mean) * row_rstd) + beta[c];
}

void backward_row_portable(int64_t n, const float* dy, const float* x, const float* gamma, float row_mean,
                           float row_rstd, float* dx) {
  double sum_g[kPartials] = {}, sum_g_xhat[kPartials] = {};
  for (int64_t c = 0; c < n; ++c) {
    const float g = dy[c] * gamma[c];
    const float xhat = (x[c] - row_mean) * row_rstd;
    sum_g[c % kPartials] += g;
    sum_g_xhat[c % kPartials] += static_cast<double>(g) * xhat;
  }
  const float mean_g = static_cast<float>(combine_partials(sum_g) / static_cast<double>(n));
  const float mean_g_xhat = static_cast<float>(combine_partials(sum_g_xhat) / static_cast<double>(n));
  for (int64_t c = 0; c < n; ++c) {
    const float g = dy[c] * gamma[c];
    const float xhat = (x[c] - row_mean) * row_rstd;
    dx[c] = row_rstd * (g - mean_g - xhat * mean_g_xhat);
  }
}

void param_grads_row_portable(int64_t n, const float* dy, const float* x, float row_mean, float row_rstd,
                              float* gamma_grad, float* beta_grad) {
  for (int64_t c = 0; c < n; ++c) {
    const float xhat = (x[c] - row_mean) * row_rstd;
    gamma_grad[c] += dy[c] * xhat;
    beta_grad[c] += dy[c];
  }
}

#if defined(SLUICE_AVX512_LANES)
// ---- AVX-512F path: sixteen floats per step, widened to two 8-lane doubles; lane i of the low (high) half is
// partial i (i + 8). The last, partial step is masked: masked-off lanes are neither loaded nor added nor stored.

SLUICE_AVX512_CODE_BEGIN

SLUICE_AVX512 inline __mmask16 step_mask(int64_t left) {
  return left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1u);
}
SLUICE_AVX512 inline __m512d low_half(__m512 v) { return _mm512_cvtps_pd(_mm512_castps512_ps256(v)); }
SLUICE_AVX512 inline __m512d high_half(__m512 v) {
  return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}

// Sixteen double partial sums.
struct Partials16 {
  __m512d low, high;
};
SLUICE_AVX512 inline Partials16 zero_partials() { return {_mm512_setzero_pd(), _mm512_setzero_pd()}; }
SLUICE_AVX512 inline void add_partials(Partials16& s, __mmask16 m, __m512d low, __m512d high) {
  s.low = _mm512_mask_add_pd(s.low, static_cast<__mmask8>(m & 0xFF), s.low, low);
  s.high = _mm512_mask_add_pd(s.high, static_cast<__mmask8>(m >> 8), s.high, high);
}
// combine_partials' tree in registers: a store and a call into the SSE2 function stalled on the store's reload and
// on leaving AVX-512 state dirty, and cost as much as the row's sums.
SLUICE_AVX512 inline double total(const Partials16& s) {
  const __m512d eight = _mm512_add_pd(s.low, s.high);  // p[i] + p[i + 8]
  const __m256d four = _mm256_add_pd(_mm512_castpd512_pd256(eight), _mm512_extractf64x4_pd(eight, 1));
  const __m128d two = _mm_add_pd(_mm256_castpd256_pd128(four), _mm256_extractf128_pd(four, 1));
  return _mm_cvtsd_f64(_mm_add_sd(two, _mm_unpackhi_pd(two, two)));  // (four[0] + four[2]) + (four[1] + four[3])
}

SLUICE_AVX512 void forward_row_avx512(int64_t n, const float* x, const float* gamma, const float* beta, float eps,
                                      float* y, float* mean, float* rstd) {
  Partials16 sum = zero_partials();
  for (int64_t c = 0; c < n; c += 16) {
    const __mmask16 m = step_mask(n - c);
    const __m512 v = _mm512_maskz_loadu_ps(m, x + c);
    add_partials(sum, m, low_half(v), high_half(v));
  }
  const double mu = total(sum) / static_cast<double>(n);
  const __m512d mu_lanes = _mm512_set1_pd(mu);
  Partials16 squares = zero_partials();
  for (int64_t c = 0; c < n; c += 16) {
    const __mmask16 m = step_mask(n - c);
    const __m512 v = _mm512_maskz_loadu_ps(m, x + c);
    const __m512d low = _mm512_sub_pd(low_half(v), mu_lanes), high = _mm512_sub_pd(high_half(v), mu_lanes);
    add_partials(squares, m, _mm512_mul_pd(low, low), _mm512_mul_pd(high, high));
  }
  const float row_mean = static_cast<float>(mu);
  const float row_rstd = static_cast<float>(1.0 / std::sqrt(total(squares) / static_cast<double>(n) + eps));
  *mean = row_mean;
  *rstd = row_rstd;
  const __m512 mean_lanes = _mm512_set1_ps(row_mean), rstd_lanes = _mm512_set1_ps(row_rstd);
  for (int64_t c = 0; c < n; c += 16) {
    const __mmask16 m = step_mask(n - c);
    const __m512 xhat = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + c), mean_lanes), rstd_lanes);
    const __m512 out = _mm512_add_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, gamma + c), xhat),
                                     _mm512_maskz_loadu_ps(m, beta + c));
    _mm512_mask_storeu_ps(y + c, m, out);
  }
}

// g = dy * gamma and xhat = (x - mean) * rstd for the sixteen (masked) elements from c.
struct GradLanes {
  __m512 g, xhat;
};
SLUICE_AVX512 inline GradLanes grad_lanes(__mmask16 m, const float* dy, const float* x, const float* gamma,
                                          __m512 mean_lanes, __m512 rstd_lanes) {
  const __m512 g = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, dy), _mm512_maskz_loadu_ps(m, gamma));
  return {g, _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x), mean_lanes), rstd_lanes)};
}

SLUICE_AVX512 void backward_row_avx512(int64_t n, const float* dy, const float* x, const float* gamma,
                                       float row_mean, float row_rstd, float* dx) {
  const __m512 mean_lanes = _mm512_set1_ps(row_mean), rstd_lanes = _mm512_set1_ps(row_rstd);
  Partials16 sum_g = zero_partials(), sum_g_xhat = zero_partials();
  for (int64_t c = 0; c < n; c += 16) {
    const __mmask16 m = step_mask(n - c);
    const GradLanes l = grad_lanes(m, dy + c, x + c, gamma + c, mean_lanes, rstd_lanes);
    const __m512d g_low = low_half(l.g), g_high = high_half(l.g);
    add_partials(sum_g, m, g_low, g_high);
    add_partials(sum_g_xhat, m, _mm512_mul_pd(g_low, low_half(l.xhat)), _mm512_mul_pd(g_high, high_half(l.xhat)));
  }
  const __m512 mean_g = _mm512_set1_ps(static_cast<float>(total(sum_g) / static_cast<double>(n)));
  const __m512 mean_g_xhat = _mm512_set1_ps(static_cast<float>(total(sum_g_xhat) / static_cast<double>(n)));
  for (int64_t c = 0; c < n; c += 16) {
    const __mmask16 m = step_mask(n - c);
    const GradLanes l = grad_lanes(m, dy + c, x + c, gamma + c, mean_lanes, rstd_lanes);
    const __m512 inner = _mm512_sub_ps(_mm512_sub_ps(l.g, mean_g), _mm512_mul_ps(l.xhat, mean_g_xhat));
    _mm512_mask_storeu_ps(dx + c, m, _mm512_mul_ps(rstd_lanes, inner));
  }
}

SLUICE_AVX512 void param_grads_row_avx512(int64_t n, const float* dy, const float* x, float row_mean,
                                          float row_rstd, float* gamma_grad, float* beta_grad) {
  const __m512 mean_lanes = _mm512_set1_ps(row_mean), rstd_lanes = _mm512_set1_ps(row_rstd);
  for (int64_t c = 0; c < n; c += 16) {
    const __mmask16 m = step_mask(n - c);
    const __m512 grad = _mm512_maskz_loadu_ps(m, dy + c);
    const __m512 xhat = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + c), mean_lanes), rstd_lanes);
    const __m512 gamma_sum = _mm512_add_ps(_mm512_maskz_loadu_ps(m, gamma_grad + c), _mm512_mul_ps(grad, xhat));
    _mm512_mask_storeu_ps(gamma_grad + c, m, gamma_sum);
    _mm512_mask_storeu_ps(beta_grad + c, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, beta_grad + c), grad));
  }
}

SLUICE_AVX512_CODE_END
#endif

// Whether `lanes` can run here: kAvx512 only where best() is.
bool use_avx512(Lanes lanes) { return lanes == Lanes::kAvx512 && best() == Lanes::kAvx512; }

}  // namespace

Lanes best() {
#if defined(SLUICE_AVX512_LANES)
  if (avx512_available()) return Lanes::kAvx512;
#endif
  return Lanes::kPortable;
}

void forward(Lanes lanes, int64_t rows, int64_t cols, const float* x, const float* gamma, const float* beta, float eps,
             float* y, float* mean, float* rstd) {
  const bool avx512 = use_avx512(lanes);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t at = r * cols;
#if defined(SLUICE_AVX512_LANES)
    if (avx512) {
      forward_row_avx512(cols, x + at, gamma, beta, eps, y + at, mean + r, rstd + r);
      continue;
    }
#endif
    forward_row_portable(cols, x + at, gamma, beta, eps, y + at, mean + r, rstd + r);
  }
  (void)avx512;
}

void backward_input(Lanes lanes, int64_t rows, int64_t cols, const float* dy, const float* x, const float* gamma,
                    const float* mean, const float* rstd, float* dx) {
  const bool avx512 = use_avx512(lanes);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t at = r * cols;
#if defined(SLUICE_AVX512_LANES)
    if (avx512) {
      backward_row_avx512(cols, dy + at, x + at, gamma, mean[r], rstd[r], dx + at);
      continue;
    }
#endif
    backward_row_portable(cols, dy + at, x + at, gamma, mean[r], rstd[r], dx + at);
  }
  (void)avx512;
}

void accumulate_param_grads(Lanes lanes, int64_t rows, int64_t cols, const float* dy, const float* x, const float* mean,
                            const float* rstd, float* gamma_grad, float* beta_grad) {
  const bool avx512 = use_avx512(lanes);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t at = r * cols;
#if defined(SLUICE_AVX512_LANES)
    if (avx512) {
      param_grads_row_avx512(cols, dy + at, x + at, mean[r], rstd[r], gamma_grad, beta_grad);
      continue;
    }
#endif
    param_grads_row_portable(cols, dy + at, x + at, mean[r], rstd[r], gamma_grad, beta_grad);
  }
  (void)avx512;
}

}  // namespace sluice::kernels::layernorm_rows
