// MSE and softmax cross-entropy with their gradients (kernels/cpu/cpu_loss.cc): the loss sum comes back as a
// double from a deterministic reduction; scaling to a batch mean stays the caller's job (grad_scale).
#include <cfloat>

#include "kernels/cuda/cuda_launch.h"
#include "kernels/cuda/deterministic_sum.cuh"
#include "kernels/cuda/launch_config.cuh"

namespace sluice::kernels::cuda_launch {
namespace {

__global__ void mse_grad_kernel(const float* pred, const float* target, float grad_scale, float* grad, int64_t n) {
  SLUICE_GRID_STRIDE(i, n) { grad[i] = grad_scale * 2.0f * (pred[i] - target[i]); }
}

struct SquaredErrorTerm {
  const float* pred;
  const float* target;
  __device__ double operator()(int64_t i) const {
    const float diff = pred[i] - target[i];
    return static_cast<double>(diff) * diff;
  }
};

__device__ float block_max(float value) {
  __shared__ float partial[kThreads];
  partial[threadIdx.x] = value;
  __syncthreads();
  for (int width = kThreads / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) partial[threadIdx.x] = fmaxf(partial[threadIdx.x], partial[threadIdx.x + width]);
    __syncthreads();
  }
  const float result = partial[0];
  __syncthreads();
  return result;
}

// One block per row; writes the row's loss to row_loss[row] for the deterministic sum over rows.
__global__ void softmax_ce_kernel(const float* logits, const float* target, float grad_scale, float* grad,
                                  double* row_loss, int64_t cols) {
  const float* z = logits + blockIdx.x * cols;
  const float* t = target + blockIdx.x * cols;
  float* g = grad + blockIdx.x * cols;
  float local_max = -FLT_MAX;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) local_max = fmaxf(local_max, z[c]);
  const float max_logit = block_max(local_max);
  double sum_exp = 0.0;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum_exp += exp(static_cast<double>(z[c] - max_logit));
  const double log_sum_exp = log(block_sum(sum_exp));
  double loss = 0.0;
  double mass = 0.0;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    loss -= t[c] * (static_cast<double>(z[c] - max_logit) - log_sum_exp);
    mass += t[c];
  }
  loss = block_sum(loss);
  const double target_mass = block_sum(mass);
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const double softmax = exp(static_cast<double>(z[c] - max_logit) - log_sum_exp);
    g[c] = grad_scale * static_cast<float>(softmax * target_mass - t[c]);
  }
  if (threadIdx.x == 0) row_loss[blockIdx.x] = loss;
}

struct RowLossTerm {
  const double* row_loss;
  __device__ double operator()(int64_t i) const { return row_loss[i]; }
};

}  // namespace

double mse(const float* pred, const float* target, float grad_scale, float* grad, int64_t n, cudaStream_t stream) {
  if (n == 0) return 0.0;
  mse_grad_kernel<<<blocks_for(n), kThreads, 0, stream>>>(pred, target, grad_scale, grad, n);
  check_launch("mse_grad_kernel");
  return deterministic_sum(SquaredErrorTerm{pred, target}, n, stream, "mse sum");
}

double softmax_cross_entropy(const float* logits, const float* target, float grad_scale, float* grad, int64_t rows,
                             int64_t cols, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return 0.0;
  double* row_loss = nullptr;
  check_cuda(cudaMallocAsync(reinterpret_cast<void**>(&row_loss), rows * sizeof(double), stream),
             "cudaMallocAsync (cross-entropy row losses)");
  softmax_ce_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(logits, target, grad_scale, grad, row_loss,
                                                                         cols);
  check_launch("softmax_ce_kernel");
  const double total = deterministic_sum(RowLossTerm{row_loss}, rows, stream, "cross-entropy sum");
  check_cuda(cudaFreeAsync(row_loss, stream), "cudaFreeAsync (cross-entropy row losses)");
  return total;
}

}  // namespace sluice::kernels::cuda_launch
