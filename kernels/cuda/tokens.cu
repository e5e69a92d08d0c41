// Token layout, gather and row-softmax kernels (token_launch.h).
#include "kernels/cuda/launch_config.cuh"
#include "kernels/cuda/token_launch.h"

namespace sluice::kernels::cuda_launch {
namespace {

__global__ void tokens_to_rows_kernel(const float* x, float* y, int64_t samples, int64_t dim, int64_t tokens) {
  SLUICE_GRID_STRIDE(i, samples * tokens * dim) {
    const int64_t s = i / (tokens * dim);
    const int64_t t = (i / dim) % tokens;
    const int64_t d = i % dim;
    y[i] = x[s * dim * tokens + d * tokens + t];
  }
}

__global__ void rows_to_tokens_kernel(const float* x, float* y, int64_t samples, int64_t dim, int64_t tokens) {
  SLUICE_GRID_STRIDE(i, samples * dim * tokens) {
    const int64_t s = i / (dim * tokens);
    const int64_t d = (i / tokens) % dim;
    const int64_t t = i % tokens;
    y[i] = x[s * dim * tokens + t * dim + d];
  }
}

__global__ void gather_columns_kernel(const int64_t* source, const float* x, int64_t x_cols, float* y, int64_t y_cols,
                                      int64_t rows) {
  SLUICE_GRID_STRIDE(i, rows * y_cols) {
    const int64_t r = i / y_cols;
    y[i] = x[r * x_cols + source[i % y_cols]];
  }
}

// One thread per row, the CPU's softmax_rows step by step.
__global__ void softmax_rows_kernel(float* s, int64_t rows, int64_t width) {
  SLUICE_GRID_STRIDE(r, rows) {
    float* row = s + r * width;
    float top = row[0];
    for (int64_t j = 1; j < width; ++j) top = fmaxf(top, row[j]);
    double sum = 0.0;
    for (int64_t j = 0; j < width; ++j) {
      row[j] = expf(row[j] - top);
      sum += row[j];
    }
    const float inverse = static_cast<float>(1.0 / sum);
    for (int64_t j = 0; j < width; ++j) row[j] *= inverse;
  }
}

__global__ void softmax_backward_rows_kernel(const float* p, float* ds, int64_t rows, int64_t width) {
  SLUICE_GRID_STRIDE(r, rows) {
    const float* pr = p + r * width;
    float* row = ds + r * width;
    double dot = 0.0;
    for (int64_t j = 0; j < width; ++j) dot += static_cast<double>(row[j]) * pr[j];
    const float shift = static_cast<float>(dot);
    for (int64_t j = 0; j < width; ++j) row[j] = pr[j] * (row[j] - shift);
  }
}

}  // namespace

void tokens_to_rows(const float* x, float* y, int64_t samples, int64_t dim, int64_t tokens, cudaStream_t stream) {
  const int64_t n = samples * dim * tokens;
  if (n == 0) return;
  tokens_to_rows_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, y, samples, dim, tokens);
  check_launch("tokens_to_rows_kernel");
}

void rows_to_tokens(const float* x, float* y, int64_t samples, int64_t dim, int64_t tokens, cudaStream_t stream) {
  const int64_t n = samples * dim * tokens;
  if (n == 0) return;
  rows_to_tokens_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, y, samples, dim, tokens);
  check_launch("rows_to_tokens_kernel");
}

void gather_columns(const int64_t* source, const float* x, int64_t x_cols, float* y, int64_t y_cols, int64_t rows,
                    cudaStream_t stream) {
  const int64_t n = rows * y_cols;
  if (n == 0) return;
  gather_columns_kernel<<<blocks_for(n), kThreads, 0, stream>>>(source, x, x_cols, y, y_cols, rows);
  check_launch("gather_columns_kernel");
}

void softmax_rows(float* s, int64_t rows, int64_t width, cudaStream_t stream) {
  if (rows == 0 || width == 0) return;
  softmax_rows_kernel<<<blocks_for(rows), kThreads, 0, stream>>>(s, rows, width);
  check_launch("softmax_rows_kernel");
}

void softmax_backward_rows(const float* p, float* ds, int64_t rows, int64_t width, cudaStream_t stream) {
  if (rows == 0 || width == 0) return;
  softmax_backward_rows_kernel<<<blocks_for(rows), kThreads, 0, stream>>>(p, ds, rows, width);
  check_launch("softmax_backward_rows_kernel");
}

}  // namespace sluice::kernels::cuda_launch
