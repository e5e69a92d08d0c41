// One row-major GEMM through cuBLAS on operands already in the input type of a GemmPrecision (fp32 for fp32 and
// tf32, bf16 for bf16), with an fp32 output: c = alpha * op(a) * op(b) + beta * c. CudaBackend::gemm converts its
// fp32 tensors and calls this; the GPU benchmark calls it on ready operands to time "the GEMMs alone".
// Sizes are the row-major ones of the Backend interface: op(a) is [m][k], op(b) [k][n], c [m][n]; lda, ldb, ldc
// are the row lengths (columns) of a, b and c as stored.
#pragma once

#include <cublas_v2.h>

#include <cstdint>

#include "kernels/backend.h"
#include "kernels/gemm_precision.h"

namespace sluice::kernels {

void row_major_gemm(cublasHandle_t handle, GemmPrecision precision, Transpose transpose_a, Transpose transpose_b,
                    int64_t m, int64_t n, int64_t k, float alpha, const void* a, int64_t lda, const void* b,
                    int64_t ldb, float beta, float* c, int64_t ldc);

// `batch` fp32 products of the same shape, operand j at a + j · stride_a (b, c likewise), in exact fp32
// (CUBLAS_COMPUTE_32F, whatever the GEMM precision): attention's per-head products (cuda_attention_ops.cc).
// Row-major sizes as row_major_gemm's.
void row_major_gemm_strided_batched(cublasHandle_t handle, Transpose transpose_a, Transpose transpose_b, int64_t m,
                                    int64_t n, int64_t k, float alpha, const float* a, int64_t lda, int64_t stride_a,
                                    const float* b, int64_t ldb, int64_t stride_b, float beta, float* c, int64_t ldc,
                                    int64_t stride_c, int64_t batch);

// Bytes of one operand element in `precision`'s input type (2 for bf16, else 4).
int gemm_operand_bytes(GemmPrecision precision);

}  // namespace sluice::kernels
