// CudaBackend::gemm (operands checked by Backend): the bf16 mode's per-call operand conversion, then one cuBLAS call
// (kernels/cuda/cublas_gemm.h).
#include <cuda_bf16.h>

#include <string>

#include "core/common/error.h"
#include "kernels/cuda/cublas_gemm.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_launch.h"

namespace sluice::kernels {
namespace {

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

void CudaBackend::gemm_impl(Transpose transpose_a, Transpose transpose_b, float alpha, const Tensor& a, const Tensor& b,
                            float beta, Tensor& c) {
  const bool ta = transpose_a == Transpose::kYes;
  const bool tb = transpose_b == Transpose::kYes;
  const int64_t m = ta ? a.cols() : a.rows();
  const int64_t k = ta ? a.rows() : a.cols();
  const int64_t n = tb ? b.rows() : b.cols();
  if (m == 0 || n == 0) return;
  if (k == 0) {  // empty product: c = beta * c, and beta = 0 must also clear NaNs, as BLAS does
    if (beta == 0.0f) {
      fill_impl(0.0f, c);
    } else {
      scale_impl(beta, c);
    }
    return;
  }
  if (precision_ == GemmPrecision::kBf16) {
    const Bf16Copy a16(a, stream_);
    const Bf16Copy b16(b, stream_);
    row_major_gemm(cublas_, precision_, transpose_a, transpose_b, m, n, k, alpha, a16.data(), a.cols(), b16.data(),
                   b.cols(), beta, c.data(), c.cols());
    return;
  }
  row_major_gemm(cublas_, precision_, transpose_a, transpose_b, m, n, k, alpha, a.data(), a.cols(), b.data(), b.cols(),
                 beta, c.data(), c.cols());
}

}  // namespace sluice::kernels
