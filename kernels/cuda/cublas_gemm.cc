// Sluice tensors are row-major and cuBLAS is column-major: a row-major matrix read as column-major is its
// transpose, so C = op(A) op(B) is computed as C^T = op(B)^T op(A)^T with the operands swapped and no copies.
#include "kernels/cuda/cublas_gemm.h"

#include <climits>
#include <string>

#include "core/common/error.h"
#include "kernels/cuda/cuda_check.h"

namespace sluice::kernels {
namespace {

int as_blas_int(int64_t value, const char* what) {
  if (value > INT_MAX) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string("gemm: ") + what + " = " + std::to_string(value) + " exceeds cuBLAS's int range");
  }
  return static_cast<int>(value);
}

}  // namespace

int gemm_operand_bytes(GemmPrecision precision) { return precision == GemmPrecision::kBf16 ? 2 : 4; }

void row_major_gemm(cublasHandle_t handle, GemmPrecision precision, Transpose transpose_a, Transpose transpose_b,
                    int64_t m, int64_t n, int64_t k, float alpha, const void* a, int64_t lda, const void* b,
                    int64_t ldb, float beta, float* c, int64_t ldc) {
  const cublasOperation_t op_a = transpose_a == Transpose::kYes ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = transpose_b == Transpose::kYes ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int cm = as_blas_int(n, "n");
  const int cn = as_blas_int(m, "m");
  const int ck = as_blas_int(k, "k");
  const int blas_lda = as_blas_int(lda, "a.cols");
  const int blas_ldb = as_blas_int(ldb, "b.cols");
  const int blas_ldc = as_blas_int(ldc, "c.cols");
  // fp32 must not silently become TF32: CUBLAS_COMPUTE_32F is exact fp32 whatever the handle's math mode.
  cudaDataType_t input_type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  const char* what = "cublasGemmEx (fp32)";
  if (precision == GemmPrecision::kBf16) {
    input_type = CUDA_R_16BF;
    what = "cublasGemmEx (bf16 in, fp32 accumulate)";
  } else if (precision == GemmPrecision::kTf32) {
    compute = CUBLAS_COMPUTE_32F_FAST_TF32;
    what = "cublasGemmEx (tf32)";
  }
  check_cublas(cublasGemmEx(handle, op_b, op_a, cm, cn, ck, &alpha, b, input_type, blas_ldb, a, input_type, blas_lda,
                            &beta, c, CUDA_R_32F, blas_ldc, compute, CUBLAS_GEMM_DEFAULT),
               what);
}

void row_major_gemm_strided_batched(cublasHandle_t handle, Transpose transpose_a, Transpose transpose_b, int64_t m,
                                    int64_t n, int64_t k, float alpha, const float* a, int64_t lda, int64_t stride_a,
                                    const float* b, int64_t ldb, int64_t stride_b, float beta, float* c, int64_t ldc,
                                    int64_t stride_c, int64_t batch) {
  const cublasOperation_t op_a = transpose_a == Transpose::kYes ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = transpose_b == Transpose::kYes ? CUBLAS_OP_T : CUBLAS_OP_N;
  check_cublas(cublasGemmStridedBatchedEx(handle, op_b, op_a, as_blas_int(n, "n"), as_blas_int(m, "m"),
                                          as_blas_int(k, "k"), &alpha, b, CUDA_R_32F, as_blas_int(ldb, "ldb"),
                                          static_cast<long long>(stride_b), a, CUDA_R_32F, as_blas_int(lda, "lda"),
                                          static_cast<long long>(stride_a), &beta, c, CUDA_R_32F,
                                          as_blas_int(ldc, "ldc"), static_cast<long long>(stride_c),
                                          as_blas_int(batch, "batch"), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               "cublasGemmStridedBatchedEx (fp32, attention)");
}

}  // namespace sluice::kernels
