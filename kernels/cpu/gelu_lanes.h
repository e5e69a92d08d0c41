// GELU (tanh approximation) and its derivative four floats at a time, for the CPU backend's activation kernels.
//
// The textbook form 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), needs a tanh per element, and glibc's
// scalar tanhf cannot be vectorised (it dominated the forward pass). Since 0.5 (1 + tanh(u)) = 1 / (1 + exp(-2u))
// = s, the same function is x * s, and its derivative 0.5 (1 + t) + 0.5 x (1 - t^2) u' is s + 2 x s (1 - s) u',
// with 1 - s computed as exp(-2u) * s (no cancellation). exp is the Cephes single-precision polynomial (range
// reduction by ln 2 in two parts, degree-6 polynomial; about 1 ulp) evaluated with SSE2, so every element, the
// tail included, goes through the same code and the results do not depend on where an element sits.
// Accuracy against a double-precision evaluation of the tanh form: tests/kernels/gelu_accuracy_test.cc.
//
// On CPUs with AVX-512F the bulk runs sixteen lanes at a time (forward16, backward16) with the same IEEE operations
// in the same order (no FMA: the including target builds with -ffp-contract=off; vdivps and vcvtps2dq round as
// their SSE forms), so every element gets the four-lane code's bits on any x86-64. Why: with four lanes the
// division and the exp polynomial bound the loop, and GELU was a tenth of the ViT benchmark's step. oneDNN's
// eltwise gelu_tanh would be as fast, but it evaluates 0.5 x (1 + tanh(u)), which cancels for negative x and
// misses the accuracy this form gives (the tests' bounds). Chosen at run time (avx512_available).
#pragma once

#include <cmath>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include "kernels/cpu/avx512_lanes.h"
#if defined(SLUICE_AVX512_LANES)
#define SLUICE_GELU_AVX512 1
#endif

namespace sluice::kernels::gelu_lanes {

constexpr int kWidth = 4;
constexpr float kSqrtTwoOverPi = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;

#if defined(__SSE2__)
// exp(x) for x clamped to [-87.3, 88]: 2^n stays a normal float and exp(88) + 1 is finite.
inline __m128 exp_ps(__m128 x) {
  x = _mm_min_ps(_mm_max_ps(x, _mm_set1_ps(-87.3f)), _mm_set1_ps(88.0f));
  const __m128i n = _mm_cvtps_epi32(_mm_mul_ps(x, _mm_set1_ps(1.44269504088896341f)));  // round to nearest
  const __m128 nf = _mm_cvtepi32_ps(n);
  // r = x - n ln2, with ln2 split so n * 0.693359375 is exact; |r| <= ln2 / 2.
  __m128 r = _mm_sub_ps(x, _mm_mul_ps(nf, _mm_set1_ps(0.693359375f)));
  r = _mm_sub_ps(r, _mm_mul_ps(nf, _mm_set1_ps(-2.12194440e-4f)));
  __m128 y = _mm_set1_ps(1.9875691500e-4f);
  y = _mm_add_ps(_mm_mul_ps(y, r), _mm_set1_ps(1.3981999507e-3f));
  y = _mm_add_ps(_mm_mul_ps(y, r), _mm_set1_ps(8.3334519073e-3f));
  y = _mm_add_ps(_mm_mul_ps(y, r), _mm_set1_ps(4.1665795894e-2f));
  y = _mm_add_ps(_mm_mul_ps(y, r), _mm_set1_ps(1.6666665459e-1f));
  y = _mm_add_ps(_mm_mul_ps(y, r), _mm_set1_ps(5.0000001201e-1f));
  y = _mm_add_ps(_mm_add_ps(_mm_mul_ps(_mm_mul_ps(y, r), r), r), _mm_set1_ps(1.0f));
  const __m128 two_to_n = _mm_castsi128_ps(_mm_slli_epi32(_mm_add_epi32(n, _mm_set1_epi32(127)), 23));
  return _mm_mul_ps(y, two_to_n);
}

// exp(-2u) for the four inputs.
inline __m128 exp_minus_two_u(__m128 x) {
  const __m128 cubic = _mm_mul_ps(_mm_mul_ps(_mm_mul_ps(_mm_set1_ps(kGeluCubic), x), x), x);
  const __m128 u = _mm_mul_ps(_mm_set1_ps(kSqrtTwoOverPi), _mm_add_ps(x, cubic));
  return exp_ps(_mm_mul_ps(u, _mm_set1_ps(-2.0f)));
}

// out[0..3] = gelu(in[0..3]). Below x = -20 GELU is below the smallest denormal: -0 exactly, as the tanh form
// gives (the clamped exp would leave x / 1.6e38 there).
inline void forward(const float* in, float* out) {
  const __m128 x = _mm_loadu_ps(in);
  const __m128 y = _mm_div_ps(x, _mm_add_ps(_mm_set1_ps(1.0f), exp_minus_two_u(x)));
  const __m128 underflows = _mm_cmplt_ps(x, _mm_set1_ps(-20.0f));  // false for NaN: NaN stays NaN
  _mm_storeu_ps(out, _mm_or_ps(_mm_andnot_ps(underflows, y), _mm_and_ps(underflows, _mm_set1_ps(-0.0f))));
}

// out[0..3] = dy[0..3] * gelu'(x[0..3])
// x is clamped to [-30, 30] first, where the slope is 0 and 1 to float precision, so that x^2 and x^3 cannot
// overflow into inf * 0 (min/max with the constant first keep a NaN x).
inline void backward(const float* x_ptr, const float* dy, float* out) {
  const __m128 x = _mm_max_ps(_mm_set1_ps(-30.0f), _mm_min_ps(_mm_set1_ps(30.0f), _mm_loadu_ps(x_ptr)));
  const __m128 e = exp_minus_two_u(x);
  const __m128 s = _mm_div_ps(_mm_set1_ps(1.0f), _mm_add_ps(_mm_set1_ps(1.0f), e));
  const __m128 one_minus_s = _mm_mul_ps(e, s);
  const __m128 u_derivative = _mm_mul_ps(
      _mm_set1_ps(kSqrtTwoOverPi),
      _mm_add_ps(_mm_set1_ps(1.0f), _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(3.0f * kGeluCubic), x), x)));
  const __m128 two_x = _mm_add_ps(x, x);
  const __m128 slope = _mm_add_ps(s, _mm_mul_ps(_mm_mul_ps(_mm_mul_ps(two_x, s), one_minus_s), u_derivative));
  _mm_storeu_ps(out, _mm_mul_ps(_mm_loadu_ps(dy), slope));
}
#endif

#if defined(SLUICE_GELU_AVX512)
constexpr int kWidth16 = 16;

// Whether this CPU runs forward16/backward16 (fixed per machine; the results do not depend on it).
using kernels::avx512_available;

// exp_ps on sixteen lanes, operation for operation.
__attribute__((target("avx512f"))) inline __m512 exp16(__m512 x) {
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.3f)), _mm512_set1_ps(88.0f));
  const __m512i n = _mm512_cvtps_epi32(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)));
  const __m512 nf = _mm512_cvtepi32_ps(n);
  __m512 r = _mm512_sub_ps(x, _mm512_mul_ps(nf, _mm512_set1_ps(0.693359375f)));
  r = _mm512_sub_ps(r, _mm512_mul_ps(nf, _mm512_set1_ps(-2.12194440e-4f)));
  __m512 y = _mm512_set1_ps(1.9875691500e-4f);
  y = _mm512_add_ps(_mm512_mul_ps(y, r), _mm512_set1_ps(1.3981999507e-3f));
  y = _mm512_add_ps(_mm512_mul_ps(y, r), _mm512_set1_ps(8.3334519073e-3f));
  y = _mm512_add_ps(_mm512_mul_ps(y, r), _mm512_set1_ps(4.1665795894e-2f));
  y = _mm512_add_ps(_mm512_mul_ps(y, r), _mm512_set1_ps(1.6666665459e-1f));
  y = _mm512_add_ps(_mm512_mul_ps(y, r), _mm512_set1_ps(5.0000001201e-1f));
  y = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(_mm512_mul_ps(y, r), r), r), _mm512_set1_ps(1.0f));
  const __m512 two_to_n = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n, _mm512_set1_epi32(127)), 23));
  return _mm512_mul_ps(y, two_to_n);
}

__attribute__((target("avx512f"))) inline __m512 exp_minus_two_u16(__m512 x) {
  const __m512 cubic = _mm512_mul_ps(_mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(kGeluCubic), x), x), x);
  const __m512 u = _mm512_mul_ps(_mm512_set1_ps(kSqrtTwoOverPi), _mm512_add_ps(x, cubic));
  return exp16(_mm512_mul_ps(u, _mm512_set1_ps(-2.0f)));
}

// forward on sixteen elements.
__attribute__((target("avx512f"))) inline void forward16(const float* in, float* out) {
  const __m512 x = _mm512_loadu_ps(in);
  const __m512 y = _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), exp_minus_two_u16(x)));
  const __mmask16 underflows = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-20.0f), _CMP_LT_OS);  // false for NaN
  _mm512_storeu_ps(out, _mm512_mask_blend_ps(underflows, y, _mm512_set1_ps(-0.0f)));
}

// backward on sixteen elements.
__attribute__((target("avx512f"))) inline void backward16(const float* x_ptr, const float* dy, float* out) {
  const __m512 x = _mm512_max_ps(_mm512_set1_ps(-30.0f), _mm512_min_ps(_mm512_set1_ps(30.0f), _mm512_loadu_ps(x_ptr)));
  const __m512 e = exp_minus_two_u16(x);
  const __m512 s = _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_add_ps(_mm512_set1_ps(1.0f), e));
  const __m512 one_minus_s = _mm512_mul_ps(e, s);
  const __m512 u_derivative = _mm512_mul_ps(
      _mm512_set1_ps(kSqrtTwoOverPi),
      _mm512_add_ps(_mm512_set1_ps(1.0f), _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(3.0f * kGeluCubic), x), x)));
  const __m512 two_x = _mm512_add_ps(x, x);
  const __m512 slope =
      _mm512_add_ps(s, _mm512_mul_ps(_mm512_mul_ps(_mm512_mul_ps(two_x, s), one_minus_s), u_derivative));
  _mm512_storeu_ps(out, _mm512_mul_ps(_mm512_loadu_ps(dy), slope));
}
#endif

#if !defined(__SSE2__)
// Without SSE2: the same formulas one element at a time (std::exp in place of the polynomial).
inline float exp_minus_two_u(float x) {
  return std::exp(std::fmax(-87.3f, -2.0f * (kSqrtTwoOverPi * (x + kGeluCubic * x * x * x))));
}
inline void forward(const float* in, float* out) {
  for (int i = 0; i < kWidth; ++i) out[i] = in[i] < -20.0f ? -0.0f : in[i] / (1.0f + exp_minus_two_u(in[i]));
}
inline void backward(const float* x_in, const float* dy, float* out) {
  for (int i = 0; i < kWidth; ++i) {
    const float x = std::isnan(x_in[i]) ? x_in[i] : std::fmax(-30.0f, std::fmin(30.0f, x_in[i]));
    const float e = exp_minus_two_u(x);
    const float s = 1.0f / (1.0f + e);
    const float u_derivative = kSqrtTwoOverPi * (1.0f + 3.0f * kGeluCubic * x * x);
    out[i] = dy[i] * (s + 2.0f * x * s * (e * s) * u_derivative);
  }
}
#endif

}  // namespace sluice::kernels::gelu_lanes
