// Parameter updates of SGD (momentum) and AdamW.
//
// The AdamW loop is written with SSE2 intrinsics, four floats at a time. The scalar loop could not be vectorised by
// the compiler (std::sqrt sets errno; the hyper-parameters were reloaded through possibly aliasing pointers) and
// cost ~1.8x more (bench/kernels). Every lane performs the same IEEE operations in the same order as the scalar
// formula (the #else branch below; sqrtps and divps are correctly rounded like sqrtss/divss; no FMA, no
// reassociation), so the results are bit-identical to it; tests/kernels/cpu_optimizer_simd_test.cc checks that
// against a scalar reference. The tail (n % 4 elements) goes through the same vector code via a small padded buffer.
// On CPUs with AVX-512F the bulk runs sixteen lanes at a time with the same operations (adamw_avx512).
#include <cmath>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kernels/cpu/avx512_lanes.h"
#include "kernels/cpu/cpu_backend.h"

namespace sluice::kernels {
namespace {

// The constants of one AdamW step, hoisted out of the element loop.
struct AdamWConstants {
  float beta1, one_minus_beta1, beta2, one_minus_beta2, bias_correction1, bias_correction2, lr, eps, decay;
};

#if defined(__SSE2__)
// Four lanes of: m1 = b1*m1 + (1-b1)*g; m2 = b2*m2 + ((1-b2)*g)*g; p = p*decay - (lr*(m1/bc1)) / (sqrt(m2/bc2) + eps)
void adamw_lanes(const AdamWConstants& k, const float* g_ptr, float* m1_ptr, float* m2_ptr, float* p_ptr) {
  const __m128 g = _mm_loadu_ps(g_ptr);
  const __m128 m1 = _mm_add_ps(_mm_mul_ps(_mm_set1_ps(k.beta1), _mm_loadu_ps(m1_ptr)),
                               _mm_mul_ps(_mm_set1_ps(k.one_minus_beta1), g));
  const __m128 m2 = _mm_add_ps(_mm_mul_ps(_mm_set1_ps(k.beta2), _mm_loadu_ps(m2_ptr)),
                               _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(k.one_minus_beta2), g), g));
  _mm_storeu_ps(m1_ptr, m1);
  _mm_storeu_ps(m2_ptr, m2);
  const __m128 m_hat = _mm_div_ps(m1, _mm_set1_ps(k.bias_correction1));
  const __m128 v_hat = _mm_div_ps(m2, _mm_set1_ps(k.bias_correction2));
  const __m128 step = _mm_div_ps(_mm_mul_ps(_mm_set1_ps(k.lr), m_hat),
                                 _mm_add_ps(_mm_sqrt_ps(v_hat), _mm_set1_ps(k.eps)));
  _mm_storeu_ps(p_ptr, _mm_sub_ps(_mm_mul_ps(_mm_loadu_ps(p_ptr), _mm_set1_ps(k.decay)), step));
}

constexpr int64_t kLanes = 4;
#else
// Without SSE2 the same formulas one element at a time (the operations and their order are the vector code's).
void adamw_lanes(const AdamWConstants& k, const float* g_ptr, float* m1_ptr, float* m2_ptr, float* p_ptr) {
  const float g = *g_ptr;
  *m1_ptr = k.beta1 * *m1_ptr + k.one_minus_beta1 * g;
  *m2_ptr = k.beta2 * *m2_ptr + k.one_minus_beta2 * g * g;
  const float m_hat = *m1_ptr / k.bias_correction1;
  const float v_hat = *m2_ptr / k.bias_correction2;
  *p_ptr = *p_ptr * k.decay - k.lr * m_hat / (std::sqrt(v_hat) + k.eps);
}
constexpr int64_t kLanes = 1;
#endif

// Runs `lanes(arrays...)` over n elements, kLanes at a time; the last n % kLanes go through a zero-padded copy so
// they see exactly the vector code (padding lanes compute on zeros and are dropped). arrays[0] is the read-only
// gradient: its tail is not copied back.
template <int kArrays, typename Lanes>
void for_each_lane_group(int64_t n, float* const (&arrays)[kArrays], Lanes lanes) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    float* at[kArrays];
    for (int a = 0; a < kArrays; ++a) at[a] = arrays[a] + i;
    lanes(at);
  }
  const int64_t tail = n - i;
  if (tail == 0) return;
  float padded[kArrays][kLanes] = {};
  float* at[kArrays];
  for (int a = 0; a < kArrays; ++a) {
    std::memcpy(padded[a], arrays[a] + i, sizeof(float) * tail);
    at[a] = padded[a];
  }
  lanes(at);
  for (int a = 1; a < kArrays; ++a) std::memcpy(arrays[a] + i, padded[a], sizeof(float) * tail);
}

#if defined(SLUICE_AVX512_LANES)
// Sixteen lanes of adamw_lanes' formula with the same IEEE operations in the same order (vdivps and vsqrtps are
// correctly rounded like their SSE forms; no FMA), so every element gets the SSE2 path's bits. Why: with four lanes
// the three divisions and the square root bound the loop, and the update was 15% of a pipeline rank's step on the
// benchmark model (issue 17); sixteen lanes leave it bound by memory. Compiled for AVX-512F only here and chosen
// at run time (avx512_available), so the binary still runs on any x86-64. Returns how many leading elements
// it updated (a multiple of 16); the rest go through the four-lane code.
SLUICE_AVX512 int64_t adamw_avx512(const AdamWConstants& k, int64_t n, const float* g_ptr, float* m1_ptr,
                                   float* m2_ptr, float* p_ptr) {
  const __m512 beta1 = _mm512_set1_ps(k.beta1), one_minus_beta1 = _mm512_set1_ps(k.one_minus_beta1);
  const __m512 beta2 = _mm512_set1_ps(k.beta2), one_minus_beta2 = _mm512_set1_ps(k.one_minus_beta2);
  const __m512 bc1 = _mm512_set1_ps(k.bias_correction1), bc2 = _mm512_set1_ps(k.bias_correction2);
  const __m512 lr = _mm512_set1_ps(k.lr), eps = _mm512_set1_ps(k.eps), decay = _mm512_set1_ps(k.decay);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 g = _mm512_loadu_ps(g_ptr + i);
    const __m512 m1 = _mm512_add_ps(_mm512_mul_ps(beta1, _mm512_loadu_ps(m1_ptr + i)), _mm512_mul_ps(one_minus_beta1, g));
    const __m512 m2 =
        _mm512_add_ps(_mm512_mul_ps(beta2, _mm512_loadu_ps(m2_ptr + i)), _mm512_mul_ps(_mm512_mul_ps(one_minus_beta2, g), g));
    _mm512_storeu_ps(m1_ptr + i, m1);
    _mm512_storeu_ps(m2_ptr + i, m2);
    const __m512 m_hat = _mm512_div_ps(m1, bc1);
    const __m512 v_hat = _mm512_div_ps(m2, bc2);
    const __m512 step = _mm512_div_ps(_mm512_mul_ps(lr, m_hat), _mm512_add_ps(_mm512_sqrt_ps(v_hat), eps));
    _mm512_storeu_ps(p_ptr + i, _mm512_sub_ps(_mm512_mul_ps(_mm512_loadu_ps(p_ptr + i), decay), step));
  }
  return i;
}
#endif

}  // namespace

// SGD stays a plain loop: it has no sqrt or division, and the SSE2 version measured slower (bench/kernels).
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
  AdamWConstants k;
  k.beta1 = hyper.beta1;
  k.one_minus_beta1 = 1.0f - hyper.beta1;
  k.beta2 = hyper.beta2;
  k.one_minus_beta2 = 1.0f - hyper.beta2;
  k.bias_correction1 = static_cast<float>(1.0 - std::pow(static_cast<double>(hyper.beta1), t));
  k.bias_correction2 = static_cast<float>(1.0 - std::pow(static_cast<double>(hyper.beta2), t));
  k.lr = hyper.lr;
  k.eps = hyper.eps;
  k.decay = 1.0f - hyper.lr * hyper.weight_decay;
  int64_t done = 0;  // elements already updated by the sixteen-lane code
#if defined(SLUICE_AVX512_LANES)
  if (avx512_available())
    done = adamw_avx512(k, param.size(), grad.data(), exp_avg.data(), exp_avg_sq.data(), param.data());
#endif
  float* const arrays[4] = {const_cast<float*>(grad.data()) + done, exp_avg.data() + done, exp_avg_sq.data() + done,
                            param.data() + done};
  // grad (arrays[0]) is only read, never written (const_cast only to share one pointer array).
  for_each_lane_group<4>(param.size() - done, arrays,
                         [&k](float* const* at) { adamw_lanes(k, at[0], at[1], at[2], at[3]); });
}

}  // namespace sluice::kernels
