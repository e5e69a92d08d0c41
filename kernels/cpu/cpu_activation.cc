// ReLU, GELU (tanh approximation, as in GPT-2/BERT) and tanh. GELU runs sixteen (AVX-512F) or four elements at a
// time, with the same bits either way (kernels/cpu/gelu_lanes.h); ReLU and tanh one at a time.
#include <cmath>
#include <cstring>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/gelu_lanes.h"

namespace sluice::kernels {
namespace {

constexpr int kWidth = gelu_lanes::kWidth;

// out = gelu(in) over n elements; the last n % kWidth through a zero-padded copy, so every element sees the same
// vector code wherever it sits (the pipelined and sequential runs, which split batches differently, agree).
void gelu_forward(const float* in, float* out, int64_t n) {
  int64_t i = 0;
#if defined(SLUICE_GELU_AVX512)
  if (gelu_lanes::avx512_available()) {
    for (; i + gelu_lanes::kWidth16 <= n; i += gelu_lanes::kWidth16) gelu_lanes::forward16(in + i, out + i);
  }
#endif
  for (; i + kWidth <= n; i += kWidth) gelu_lanes::forward(in + i, out + i);
  if (i == n) return;
  float in_tail[kWidth] = {}, out_tail[kWidth];
  std::memcpy(in_tail, in + i, sizeof(float) * (n - i));
  gelu_lanes::forward(in_tail, out_tail);
  std::memcpy(out + i, out_tail, sizeof(float) * (n - i));
}

// out = dy * gelu'(x) over n elements, tail as in gelu_forward.
void gelu_backward(const float* x, const float* dy, float* out, int64_t n) {
  int64_t i = 0;
#if defined(SLUICE_GELU_AVX512)
  if (gelu_lanes::avx512_available()) {
    for (; i + gelu_lanes::kWidth16 <= n; i += gelu_lanes::kWidth16) gelu_lanes::backward16(x + i, dy + i, out + i);
  }
#endif
  for (; i + kWidth <= n; i += kWidth) gelu_lanes::backward(x + i, dy + i, out + i);
  if (i == n) return;
  float x_tail[kWidth] = {}, dy_tail[kWidth] = {}, out_tail[kWidth];
  std::memcpy(x_tail, x + i, sizeof(float) * (n - i));
  std::memcpy(dy_tail, dy + i, sizeof(float) * (n - i));
  gelu_lanes::backward(x_tail, dy_tail, out_tail);
  std::memcpy(out + i, out_tail, sizeof(float) * (n - i));
}

// NaN passes through as in PyTorch (torch.relu(nan) is nan): a NaN turned into 0 would hide a broken input or
// layer behind a plausible activation. !(x <= 0) is x > 0 for every other value, so finite results are unchanged.
float relu(float x) { return !(x <= 0.0f) ? x : 0.0f; }
float tanh_activation(float x) { return std::tanh(x); }

// One row of bias_activation_forward; a template per activation so the inner loop has no switch.
template <float (*kActivate)(float)>
void bias_activation_row(const float* bias, float* pre, float* out, int64_t cols) {
  for (int64_t c = 0; c < cols; ++c) {
    const float v = pre[c] + bias[c];  // the same single rounding as add_bias's row[c] += b[c]
    pre[c] = v;
    out[c] = kActivate(v);
  }
}

// GELU's row: the bias add (same rounding as above), then the vector GELU over the row.
void bias_gelu_row(const float* bias, float* pre, float* out, int64_t cols) {
  for (int64_t c = 0; c < cols; ++c) pre[c] += bias[c];
  gelu_forward(pre, out, cols);
}

}  // namespace

void CpuBackend::bias_activation_forward_impl(Activation activation, const Tensor& bias, Tensor& pre, Tensor& y) {
  void (*row)(const float*, float*, float*, int64_t) = nullptr;
  switch (activation) {
    case Activation::kRelu: row = bias_activation_row<relu>; break;
    case Activation::kGelu: row = bias_gelu_row; break;
    case Activation::kTanh: row = bias_activation_row<tanh_activation>; break;
  }
  const int64_t cols = pre.cols();
  for (int64_t r = 0; r < pre.rows(); ++r) row(bias.data(), pre.data() + r * cols, y.data() + r * cols, cols);
}

void CpuBackend::activation_forward_impl(Activation activation, const Tensor& x, Tensor& y) {
  const float* in = x.data();
  float* out = y.data();
  const int64_t n = x.size();
  switch (activation) {
    case Activation::kRelu:
      for (int64_t i = 0; i < n; ++i) out[i] = relu(in[i]);
      break;
    case Activation::kGelu:
      gelu_forward(in, out, n);
      break;
    case Activation::kTanh:
      for (int64_t i = 0; i < n; ++i) out[i] = tanh_activation(in[i]);
      break;
  }
}

void CpuBackend::activation_backward_impl(Activation activation, const Tensor& saved, const Tensor& dy, Tensor& dx) {
  const float* s = saved.data();
  const float* g = dy.data();
  float* out = dx.data();
  const int64_t n = saved.size();
  switch (activation) {
    case Activation::kRelu:  // saved = output; output > 0 exactly where input > 0 (NaN: dy passes, as in PyTorch)
      for (int64_t i = 0; i < n; ++i) out[i] = !(s[i] <= 0.0f) ? g[i] : 0.0f;
      break;
    case Activation::kGelu:  // saved = input
      gelu_backward(s, g, out, n);
      break;
    case Activation::kTanh:  // saved = output: d tanh = 1 - tanh^2
      for (int64_t i = 0; i < n; ++i) out[i] = g[i] * (1.0f - s[i] * s[i]);
      break;
  }
}

}  // namespace sluice::kernels
