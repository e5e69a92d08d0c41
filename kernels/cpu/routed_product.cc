#include "kernels/cpu/routed_product.h"

#include <cblas.h>

#include <string>

#include "core/common/error.h"

namespace sluice::kernels {

OnednnGemmResult compute_product(const Product& p, bool routed) {
  if (routed) {
    const OnednnGemmResult result =
        onednn_gemm(p.ta, p.tb, p.m, p.n, p.k, p.alpha, p.a, p.lda, p.b, p.ldb, p.beta, p.c, p.ldc);
    if (result != OnednnGemmResult::kUnavailable) return result;
  }
  cblas_sgemm(CblasRowMajor, p.ta ? CblasTrans : CblasNoTrans, p.tb ? CblasTrans : CblasNoTrans, static_cast<int>(p.m),
              static_cast<int>(p.n), static_cast<int>(p.k), p.alpha, p.a, static_cast<int>(p.lda), p.b,
              static_cast<int>(p.ldb), p.beta, p.c, static_cast<int>(p.ldc));
  return OnednnGemmResult::kDone;
}

void routed_product(const Product& p) {
  if (compute_product(p, onednn_gemm_suits(p.ta, p.tb, p.m, p.n, p.k)) == OnednnGemmResult::kFailed) {
    throw Error(ErrorCode::kInternal, "gemm: oneDNN failed to build or run a " + std::to_string(p.m) + "x" +
                                          std::to_string(p.k) + " by " + std::to_string(p.k) + "x" +
                                          std::to_string(p.n) + " product (out of memory?)");
  }
}

}  // namespace sluice::kernels
