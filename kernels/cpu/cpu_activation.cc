// ReLU, GELU (tanh approximation, as in GPT-2/BERT) and tanh.
#include <cmath>

#include "kernels/cpu/cpu_backend.h"

namespace sluice::kernels {
namespace {

constexpr float kSqrtTwoOverPi = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;

float gelu(float x) {
  const float inner = kSqrtTwoOverPi * (x + kGeluCubic * x * x * x);
  return 0.5f * x * (1.0f + std::tanh(inner));
}

float gelu_derivative(float x) {
  const float inner = kSqrtTwoOverPi * (x + kGeluCubic * x * x * x);
  const float t = std::tanh(inner);
  const float inner_derivative = kSqrtTwoOverPi * (1.0f + 3.0f * kGeluCubic * x * x);
  return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * inner_derivative;
}

float relu(float x) { return x > 0.0f ? x : 0.0f; }
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

}  // namespace

void CpuBackend::bias_activation_forward_impl(Activation activation, const Tensor& bias, Tensor& pre, Tensor& y) {
  void (*row)(const float*, float*, float*, int64_t) = nullptr;
  switch (activation) {
    case Activation::kRelu: row = bias_activation_row<relu>; break;
    case Activation::kGelu: row = bias_activation_row<gelu>; break;
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
      for (int64_t i = 0; i < n; ++i) out[i] = gelu(in[i]);
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
    case Activation::kRelu:  // saved = output; output > 0 exactly where input > 0
      for (int64_t i = 0; i < n; ++i) out[i] = s[i] > 0.0f ? g[i] : 0.0f;
      break;
    case Activation::kGelu:  // saved = input
      for (int64_t i = 0; i < n; ++i) out[i] = g[i] * gelu_derivative(s[i]);
      break;
    case Activation::kTanh:  // saved = output: d tanh = 1 - tanh^2
      for (int64_t i = 0; i < n; ++i) out[i] = g[i] * (1.0f - s[i] * s[i]);
      break;
  }
}

}  // namespace sluice::kernels
