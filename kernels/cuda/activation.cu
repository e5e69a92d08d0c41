// ReLU, GELU (tanh approximation) and tanh with the CPU path's formulas (kernels/cpu/cpu_activation.cc).
#include "kernels/cuda/cuda_launch.h"
#include "kernels/cuda/launch_config.cuh"

namespace sluice::kernels::cuda_launch {
namespace {

constexpr float kSqrtTwoOverPi = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;

__device__ float gelu(float x) {
  const float inner = kSqrtTwoOverPi * (x + kGeluCubic * x * x * x);
  return 0.5f * x * (1.0f + tanhf(inner));
}

__device__ float gelu_derivative(float x) {
  const float inner = kSqrtTwoOverPi * (x + kGeluCubic * x * x * x);
  const float t = tanhf(inner);
  const float inner_derivative = kSqrtTwoOverPi * (1.0f + 3.0f * kGeluCubic * x * x);
  return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * inner_derivative;
}

__global__ void forward_kernel(Activation activation, const float* x, float* y, int64_t n) {
  SLUICE_GRID_STRIDE(i, n) {
    const float v = x[i];
    switch (activation) {
      case Activation::kRelu: y[i] = v > 0.0f ? v : 0.0f; break;
      case Activation::kGelu: y[i] = gelu(v); break;
      case Activation::kTanh: y[i] = tanhf(v); break;
    }
  }
}

// `saved` is the output for ReLU and tanh, the input for GELU (activation_backward_uses_input).
__global__ void backward_kernel(Activation activation, const float* saved, const float* dy, float* dx, int64_t n) {
  SLUICE_GRID_STRIDE(i, n) {
    const float s = saved[i];
    switch (activation) {
      case Activation::kRelu: dx[i] = s > 0.0f ? dy[i] : 0.0f; break;
      case Activation::kGelu: dx[i] = dy[i] * gelu_derivative(s); break;
      case Activation::kTanh: dx[i] = dy[i] * (1.0f - s * s); break;
    }
  }
}

}  // namespace

void activation_forward(Activation activation, const float* x, float* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  forward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(activation, x, y, n);
  check_launch("activation forward_kernel");
}

void activation_backward(Activation activation, const float* saved, const float* dy, float* dx, int64_t n,
                         cudaStream_t stream) {
  if (n == 0) return;
  backward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(activation, saved, dy, dx, n);
  check_launch("activation backward_kernel");
}

}  // namespace sluice::kernels::cuda_launch
