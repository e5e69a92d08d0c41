// Host-callable launchers for tokens.cu: the transformer's layout changes, unpatch's column gather, and the
// row-wise parts of attention between the cuBLAS products (cuda_attention_ops.cc). One thread per output element or
// per row; a row's sums run in the CPU's order (kernels/cpu/cpu_attention.cc: in double, left to right), no
// atomics, so results repeat bit for bit and do not depend on the grid. Each launcher checks its launch and throws
// Error(kCuda) naming the kernel.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace sluice::kernels::cuda_launch {

// y [samples·T][D] = each sample's [D, T] transposed (tokens_to_rows); rows_to_tokens is the inverse.
void tokens_to_rows(const float* x, float* y, int64_t samples, int64_t dim, int64_t tokens, cudaStream_t stream);
void rows_to_tokens(const float* x, float* y, int64_t samples, int64_t dim, int64_t tokens, cudaStream_t stream);
// y[r][j] = x[r][source[j]], `source` a device array of y_cols indices into a row of x_cols.
void gather_columns(const int64_t* source, const float* x, int64_t x_cols, float* y, int64_t y_cols, int64_t rows,
                    cudaStream_t stream);
// Each of `rows` rows of `width` becomes its softmax: the row's maximum subtracted, exp, times 1 / (the sum in
// double, in order).
void softmax_rows(float* s, int64_t rows, int64_t width, cudaStream_t stream);
// The softmax's backward per row: ds = p ∘ (ds − Σ_j ds·p) (the dot in double, in order); ds is overwritten.
void softmax_backward_rows(const float* p, float* ds, int64_t rows, int64_t width, cudaStream_t stream);

}  // namespace sluice::kernels::cuda_launch
