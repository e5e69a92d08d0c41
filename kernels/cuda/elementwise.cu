// Fills, element-wise arithmetic, bias ops and the fp32 -> bf16 conversion of the GEMM's bf16 mode.
#include <cuda_bf16.h>

#include "kernels/cuda/cuda_launch.h"
#include "kernels/cuda/deterministic_sum.cuh"
#include "kernels/cuda/launch_config.cuh"
#include "kernels/cuda/philox_device.cuh"

namespace sluice::kernels::cuda_launch {
namespace {

__global__ void fill_kernel(float value, float* x, int64_t n) {
  SLUICE_GRID_STRIDE(i, n) { x[i] = value; }
}

// One thread per Philox block of 4 elements, so each Philox call is made once, as on the CPU.
__global__ void fill_uniform_kernel(RngStream rng, float low, float high, float* x, int64_t n) {
  SLUICE_GRID_STRIDE(block, (n + 3) / 4) {
    float u[4];
    uniform_block(rng, rng.first_sample, static_cast<uint64_t>(block), u);  // a flat stream
    for (int w = 0; w < 4; ++w) {
      const int64_t i = block * 4 + w;
      // Written as the CPU writes it, low + (high - low) * u, without FMA contraction (see --fmad=false).
      if (i < n) x[i] = low + (high - low) * u[w];
    }
  }
}

__global__ void add_kernel(const float* a, const float* b, float* out, int64_t n) {
  SLUICE_GRID_STRIDE(i, n) { out[i] = a[i] + b[i]; }
}

__global__ void axpy_kernel(float alpha, const float* x, float* y, int64_t n) {
  SLUICE_GRID_STRIDE(i, n) { y[i] += alpha * x[i]; }
}

__global__ void scale_kernel(float alpha, float* x, int64_t n) {
  SLUICE_GRID_STRIDE(i, n) { x[i] *= alpha; }
}

__global__ void add_bias_kernel(const float* bias, float* y, int64_t rows, int64_t cols) {
  SLUICE_GRID_STRIDE(i, rows * cols) { y[i] += bias[i % cols]; }
}

// bias_grad[c] += sum over rows of dy[r][c], as the deterministic two-pass column sum of deterministic_sum.cuh
// (row slices, then the slices in order): bit-identical run to run, equal to the CPU's top-to-bottom sum up to
// rounding. Adjacent threads read adjacent columns of a row, so the loads coalesce.
struct BiasGradTerms {
  static constexpr int kSums = 1;
  const float* dy;
  int64_t cols;
  __device__ void operator()(int64_t r, int64_t c, float (&acc)[kSums]) const { acc[0] += dy[r * cols + c]; }
};

__global__ void to_bf16_kernel(const float* in, __nv_bfloat16* out, int64_t n) {
  SLUICE_GRID_STRIDE(i, n) { out[i] = __float2bfloat16_rn(in[i]); }
}

struct SquareTerm {
  const float* x;
  __device__ double operator()(int64_t i) const { return static_cast<double>(x[i]) * x[i]; }
};

}  // namespace

void fill(float value, float* x, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  fill_kernel<<<blocks_for(n), kThreads, 0, stream>>>(value, x, n);
  check_launch("fill_kernel");
}

void fill_uniform(const RngStream& rng, float low, float high, float* x, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  fill_uniform_kernel<<<blocks_for((n + 3) / 4), kThreads, 0, stream>>>(rng, low, high, x, n);
  check_launch("fill_uniform_kernel");
}

void add(const float* a, const float* b, float* out, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  add_kernel<<<blocks_for(n), kThreads, 0, stream>>>(a, b, out, n);
  check_launch("add_kernel");
}

void axpy(float alpha, const float* x, float* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  axpy_kernel<<<blocks_for(n), kThreads, 0, stream>>>(alpha, x, y, n);
  check_launch("axpy_kernel");
}

void scale(float alpha, float* x, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  scale_kernel<<<blocks_for(n), kThreads, 0, stream>>>(alpha, x, n);
  check_launch("scale_kernel");
}

void add_bias(const float* bias, float* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows * cols == 0) return;
  add_bias_kernel<<<blocks_for(rows * cols), kThreads, 0, stream>>>(bias, y, rows, cols);
  check_launch("add_bias_kernel");
}

void accumulate_bias_grad(const float* dy, float* bias_grad, int64_t rows, int64_t cols, cudaStream_t stream) {
  accumulate_column_sums(BiasGradTerms{dy, cols}, rows, cols, ColumnOutputs<1>{{bias_grad}}, stream,
                         "accumulate_bias_grad (column sums)");
}

double sum_of_squares(const float* x, int64_t n, cudaStream_t stream) {
  if (n == 0) return 0.0;
  return deterministic_sum(SquareTerm{x}, n, stream, "sum_of_squares");
}

void to_bf16(const float* in, void* out, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  to_bf16_kernel<<<blocks_for(n), kThreads, 0, stream>>>(in, static_cast<__nv_bfloat16*>(out), n);
  check_launch("to_bf16_kernel");
}

}  // namespace sluice::kernels::cuda_launch
