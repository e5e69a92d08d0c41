// ReLU, GELU (tanh approximation, as in GPT-2/BERT) and tanh.
#include <cmath>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/shape_check.h"

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

}  // namespace

void CpuBackend::activation_forward(Activation activation, const Tensor& x, Tensor& y) {
  cpu_detail::require_same_shape("activation_forward", "y", y, x);
  const float* in = x.data();
  float* out = y.data();
  const int64_t n = x.size();
  switch (activation) {
    case Activation::kRelu:
      for (int64_t i = 0; i < n; ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
      break;
    case Activation::kGelu:
      for (int64_t i = 0; i < n; ++i) out[i] = gelu(in[i]);
      break;
    case Activation::kTanh:
      for (int64_t i = 0; i < n; ++i) out[i] = std::tanh(in[i]);
      break;
  }
}

void CpuBackend::activation_backward(Activation activation, const Tensor& saved, const Tensor& dy, Tensor& dx) {
  cpu_detail::require_same_shape("activation_backward", "dy", dy, saved);
  cpu_detail::require_same_shape("activation_backward", "dx", dx, saved);
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
