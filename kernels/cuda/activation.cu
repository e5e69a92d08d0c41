// ReLU, GELU (tanh approximation) and tanh with the CPU path's formulas (kernels/cpu/cpu_activation.cc), alone
// or fused with the bias add before them.
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

__device__ float activate(Activation activation, float v) {
  switch (activation) {
    case Activation::kRelu: return !(v <= 0.0f) ? v : 0.0f;  // NaN passes through, as on the CPU and in PyTorch
    case Activation::kGelu: return gelu(v);
    case Activation::kTanh: return tanhf(v);
  }
  return v;
}

__global__ void forward_kernel(Activation activation, const float* x, float* y, int64_t n) {
  SLUICE_GRID_STRIDE(i, n) { y[i] = activate(activation, x[i]); }
}

// add_bias_kernel and forward_kernel in one pass: the pre-activation is read once and written once.
__global__ void bias_forward_kernel(Activation activation, const float* bias, float* pre, float* y, int64_t rows,
                                    int64_t cols) {
  SLUICE_GRID_STRIDE(i, rows * cols) {
    const float v = pre[i] + bias[i % cols];
    pre[i] = v;
    y[i] = activate(activation, v);
  }
}

// `saved` is the output for ReLU and tanh, the input for GELU (activation_backward_uses_input).
__global__ void backward_kernel(Activation activation, const float* saved, const float* dy, float* dx, int64_t n) {
  SLUICE_GRID_STRIDE(i, n) {
    const float s = saved[i];
    switch (activation) {
      case Activation::kRelu: dx[i] = !(s <= 0.0f) ? dy[i] : 0.0f; break;
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

void bias_activation_forward(Activation activation, const float* bias, float* pre, float* y, int64_t rows,
                             int64_t cols, cudaStream_t stream) {
  if (rows * cols == 0) return;
  bias_forward_kernel<<<blocks_for(rows * cols), kThreads, 0, stream>>>(activation, bias, pre, y, rows, cols);
  check_launch("activation bias_forward_kernel");
}

void activation_backward(Activation activation, const float* saved, const float* dy, float* dx, int64_t n,
                         cudaStream_t stream) {
  if (n == 0) return;
  backward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(activation, saved, dy, dx, n);
  check_launch("activation backward_kernel");
}

}  // namespace sluice::kernels::cuda_launch
