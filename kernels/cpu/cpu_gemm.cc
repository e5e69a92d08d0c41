// Matrix products and the bias ops that go with them. A product goes to oneDNN or to OpenBLAS by its shape alone
// (onednn_gemm_suits), so the pipelined run and the sequential reference use the same library for it.
#include <cblas.h>

#include <string>

#include "core/common/error.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/onednn_gemm.h"

namespace sluice::kernels {

void CpuBackend::gemm_impl(Transpose transpose_a, Transpose transpose_b, float alpha, const Tensor& a, const Tensor& b,
                           float beta, Tensor& c) {
  const bool ta = transpose_a == Transpose::kYes;
  const bool tb = transpose_b == Transpose::kYes;
  const int64_t m = ta ? a.cols() : a.rows();
  const int64_t k = ta ? a.rows() : a.cols();
  const int64_t n = tb ? b.rows() : b.cols();
  if (m == 0 || n == 0) return;
  if (k == 0) {  // the product is empty, so c = beta * c; beta = 0 must also clear NaNs, as BLAS does
    if (beta == 0.0f) {
      fill_impl(0.0f, c);
    } else {
      scale_impl(beta, c);
    }
    return;
  }
  if (onednn_gemm_suits(ta, tb, m, n, k)) {
    const OnednnGemmResult result =
        onednn_gemm(ta, tb, m, n, k, alpha, a.data(), a.cols(), b.data(), b.cols(), beta, c.data(), c.cols());
    if (result == OnednnGemmResult::kDone) return;
    if (result == OnednnGemmResult::kFailed) {
      throw Error(ErrorCode::kInternal, "gemm: oneDNN failed to build or run a " + std::to_string(m) + "x" +
                                            std::to_string(k) + " by " + std::to_string(k) + "x" +
                                            std::to_string(n) + " product (out of memory?)");
    }
  }
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), alpha, a.data(), static_cast<int>(a.cols()), b.data(),
              static_cast<int>(b.cols()), beta, c.data(), static_cast<int>(c.cols()));
}

void CpuBackend::add_bias_impl(const Tensor& bias, Tensor& y) {
  const float* b = bias.data();
  for (int64_t r = 0; r < y.rows(); ++r) {
    float* row = y.data() + r * y.cols();
    for (int64_t c = 0; c < y.cols(); ++c) row[c] += b[c];
  }
}

void CpuBackend::accumulate_bias_grad_impl(const Tensor& dy, Tensor& bias_grad) {
  float* g = bias_grad.data();
  for (int64_t r = 0; r < dy.rows(); ++r) {
    const float* row = dy.data() + r * dy.cols();
    for (int64_t c = 0; c < dy.cols(); ++c) g[c] += row[c];
  }
}

}  // namespace sluice::kernels
