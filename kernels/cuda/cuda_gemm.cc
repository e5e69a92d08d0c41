// GEMM through cuBLAS. Sluice tensors are row-major and cuBLAS is column-major: a row-major matrix read as
// column-major is its transpose, so C = op(A) op(B) is computed as C^T = op(B)^T op(A)^T with the operands
// swapped and no copies.
#include <cuda_bf16.h>

#include <climits>
#include <string>

#include "core/common/error.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_launch.h"
#include "kernels/cuda/device_check.h"

namespace sluice::kernels {
namespace {

int as_blas_int(int64_t value, const char* what) {
  if (value > INT_MAX) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string("gemm: ") + what + " = " + std::to_string(value) + " exceeds cuBLAS's int range");
  }
  return static_cast<int>(value);
}

// A bf16 copy of an fp32 tensor, released on the stream when it goes out of scope.
class Bf16Copy {
 public:
  Bf16Copy(const Tensor& source, cudaStream_t stream) : stream_(stream) {
    check_cuda(cudaMallocAsync(&data_, static_cast<size_t>(source.size()) * sizeof(__nv_bfloat16), stream),
               "cudaMallocAsync (bf16 gemm operand)");
    cuda_launch::to_bf16(source.data(), data_, source.size(), stream);
  }
  ~Bf16Copy() { cudaFreeAsync(data_, stream_); }
  Bf16Copy(const Bf16Copy&) = delete;
  Bf16Copy& operator=(const Bf16Copy&) = delete;
  const void* data() const { return data_; }

 private:
  void* data_ = nullptr;
  cudaStream_t stream_;
};

}  // namespace

void CudaBackend::gemm(Transpose transpose_a, Transpose transpose_b, float alpha, const Tensor& a, const Tensor& b,
                       float beta, Tensor& c) {
  cuda_detail::require_device("gemm", "a", a);
  cuda_detail::require_device("gemm", "b", b);
  cuda_detail::require_device("gemm", "c", c);
  const bool ta = transpose_a == Transpose::kYes;
  const bool tb = transpose_b == Transpose::kYes;
  const int64_t m = ta ? a.cols() : a.rows();
  const int64_t k = ta ? a.rows() : a.cols();
  const int64_t n = tb ? b.rows() : b.cols();
  cuda_detail::require_shape("gemm", "op(b)", b, tb ? n : k, tb ? k : n);
  cuda_detail::require_shape("gemm", "c", c, m, n);
  if (m == 0 || n == 0) return;
  if (k == 0) {  // empty product: c = beta * c, and beta = 0 must also clear NaNs, as BLAS does
    if (beta == 0.0f) {
      fill(0.0f, c);
    } else {
      scale(beta, c);
    }
    return;
  }
  const cublasOperation_t op_b = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int cm = as_blas_int(n, "n");
  const int cn = as_blas_int(m, "m");
  const int ck = as_blas_int(k, "k");
  const int ldb = as_blas_int(b.cols(), "b.cols");
  const int lda = as_blas_int(a.cols(), "a.cols");
  if (precision_ == GemmPrecision::kBf16) {
    const Bf16Copy a16(a, stream_);
    const Bf16Copy b16(b, stream_);
    check_cublas(cublasGemmEx(cublas_, op_b, op_a, cm, cn, ck, &alpha, b16.data(), CUDA_R_16BF, ldb, a16.data(),
                              CUDA_R_16BF, lda, &beta, c.data(), CUDA_R_32F, cm, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx (bf16 in, fp32 accumulate)");
    return;
  }
  const cublasComputeType_t compute =
      precision_ == GemmPrecision::kTf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  check_cublas(cublasGemmEx(cublas_, op_b, op_a, cm, cn, ck, &alpha, b.data(), CUDA_R_32F, ldb, a.data(), CUDA_R_32F,
                            lda, &beta, c.data(), CUDA_R_32F, cm, compute, CUBLAS_GEMM_DEFAULT),
               precision_ == GemmPrecision::kTf32 ? "cublasGemmEx (tf32)" : "cublasGemmEx (fp32)");
}

}  // namespace sluice::kernels
