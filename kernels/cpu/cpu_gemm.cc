// Matrix products and the bias ops that go with them. A product goes to oneDNN or to OpenBLAS by its shape alone
// (onednn_gemm_suits), so the pipelined run and the sequential reference use the same library for it; it is cut
// into blocks fixed by its shape (gemm_split.h) that the rank's threads compute side by side, each block on one
// library thread, so its bits do not depend on the thread count either.
#include <algorithm>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "kernels/cpu/blas_threads.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/gemm_split.h"
#include "kernels/cpu/onednn_gemm.h"
#include "kernels/cpu/parallel_blocks.h"
#include "kernels/cpu/routed_product.h"

namespace sluice::kernels {

namespace {

// Block j of `whole` under `split`: a band of c's rows (and of op(a)'s) or of its columns (and of op(b)'s).
Product block_of(const Product& whole, const GemmSplit& split, int64_t j) {
  Product part = whole;
  const int64_t first = j * split.block;
  if (split.by_rows) {
    part.m = std::min(split.block, whole.m - first);
    part.a = whole.ta ? whole.a + first : whole.a + first * whole.lda;  // op(a)'s rows are a's columns if transposed
    part.c = whole.c + first * whole.ldc;
  } else {
    part.n = std::min(split.block, whole.n - first);
    part.b = whole.tb ? whole.b + first * whole.ldb : whole.b + first;  // op(b)'s columns are b's rows if transposed
    part.c = whole.c + first;
  }
  return part;
}

}  // namespace

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
  const Product whole{ta, tb, m, n, k, alpha, beta, a.data(), a.cols(), b.data(), b.cols(), c.data(), c.cols()};
  const GemmSplit split = gemm_split(m, n, k);
  const bool routed = onednn_gemm_suits(ta, tb, m, n, k);
  // The rank's threads (cpu_threads, or the host's BLAS setting) run the blocks; the library inside each block runs
  // on one, and the setting is back once no product runs.
  const BlasHeldAtOneThread library_on_one_thread;
  std::vector<OnednnGemmResult> results(static_cast<size_t>(split.count), OnednnGemmResult::kDone);
  if (split.count == 1) {
    results[0] = compute_product(whole, routed);
  } else {
    run_blocks(split.count, library_on_one_thread.team_threads(), [&](int64_t j) {
      results[static_cast<size_t>(j)] = compute_product(block_of(whole, split, j), routed);
    });
  }
  for (OnednnGemmResult result : results) {
    if (result == OnednnGemmResult::kFailed) {
      throw Error(ErrorCode::kInternal, "gemm: oneDNN failed to build or run a " + std::to_string(m) + "x" +
                                            std::to_string(k) + " by " + std::to_string(k) + "x" +
                                            std::to_string(n) + " product (out of memory?)");
    }
  }
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
