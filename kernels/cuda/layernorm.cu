// LayerNorm over each row, one thread block per row, row statistics in double as on the CPU
// (kernels/cpu/cpu_layernorm.cc). Parameter gradients are column sums over the rows, through the deterministic
// two-pass column sum of deterministic_sum.cuh: bit-identical run to run, equal to the CPU's row-by-row
// accumulation up to rounding (a different order of additions).
#include "kernels/cuda/cuda_launch.h"
#include "kernels/cuda/deterministic_sum.cuh"
#include "kernels/cuda/launch_config.cuh"

namespace sluice::kernels::cuda_launch {
namespace {

__global__ void forward_kernel(const float* x, const float* gamma, const float* beta, float eps, float* y,
                               float* mean, float* rstd, int64_t cols) {
  const float* in = x + blockIdx.x * cols;
  double sum = 0.0;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += in[c];
  const double mu = block_sum(sum) / static_cast<double>(cols);
  double squares = 0.0;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) squares += (in[c] - mu) * (in[c] - mu);
  squares = block_sum(squares);
  const float row_mean = static_cast<float>(mu);
  const float row_rstd = static_cast<float>(1.0 / sqrt(squares / static_cast<double>(cols) + eps));
  if (threadIdx.x == 0) {
    mean[blockIdx.x] = row_mean;
    rstd[blockIdx.x] = row_rstd;
  }
  float* out = y + blockIdx.x * cols;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    out[c] = gamma[c] * ((in[c] - row_mean) * row_rstd) + beta[c];
  }
}

// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * gamma
__global__ void backward_input_kernel(const float* dy, const float* x, const float* gamma, const float* mean,
                                      const float* rstd, float* dx, int64_t cols) {
  const float* in = x + blockIdx.x * cols;
  const float* grad = dy + blockIdx.x * cols;
  const float row_mean = mean[blockIdx.x];
  const float row_rstd = rstd[blockIdx.x];
  double sum_g = 0.0;
  double sum_g_xhat = 0.0;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const float g = grad[c] * gamma[c];
    const float xhat = (in[c] - row_mean) * row_rstd;
    sum_g += g;
    sum_g_xhat += static_cast<double>(g) * xhat;
  }
  const float mean_g = static_cast<float>(block_sum(sum_g) / static_cast<double>(cols));
  const float mean_g_xhat = static_cast<float>(block_sum(sum_g_xhat) / static_cast<double>(cols));
  float* out = dx + blockIdx.x * cols;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const float g = grad[c] * gamma[c];
    const float xhat = (in[c] - row_mean) * row_rstd;
    out[c] = row_rstd * (g - mean_g - xhat * mean_g_xhat);
  }
}

// gamma_grad[c] += sum over r of dy[r][c] * xhat[r][c], beta_grad[c] += sum over r of dy[r][c]; xhat and the
// product rounded as the CPU rounds them (--fmad=false keeps the product and the sum two roundings).
struct ParamGradTerms {
  static constexpr int kSums = 2;
  const float* dy;
  const float* x;
  const float* mean;
  const float* rstd;
  int64_t cols;
  __device__ void operator()(int64_t r, int64_t c, float (&acc)[kSums]) const {
    const int64_t i = r * cols + c;
    const float xhat = (x[i] - mean[r]) * rstd[r];
    acc[0] += dy[i] * xhat;
    acc[1] += dy[i];
  }
};

}  // namespace

void layernorm_forward(const float* x, const float* gamma, const float* beta, float eps, float* y, float* mean,
                       float* rstd, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  forward_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(x, gamma, beta, eps, y, mean, rstd, cols);
  check_launch("layernorm forward_kernel");
}

void layernorm_backward_input(const float* dy, const float* x, const float* gamma, const float* mean,
                              const float* rstd, float* dx, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  backward_input_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(dy, x, gamma, mean, rstd, dx, cols);
  check_launch("layernorm backward_input_kernel");
}

void layernorm_accumulate_param_grads(const float* dy, const float* x, const float* mean, const float* rstd,
                                      float* gamma_grad, float* beta_grad, int64_t rows, int64_t cols,
                                      cudaStream_t stream) {
  accumulate_column_sums(ParamGradTerms{dy, x, mean, rstd, cols}, rows, cols,
                         ColumnOutputs<2>{{gamma_grad, beta_grad}}, stream,
                         "layernorm_accumulate_param_grads (column sums)");
}

}  // namespace sluice::kernels::cuda_launch
