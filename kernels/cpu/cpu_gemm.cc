// Matrix products and the bias ops that go with them. A product goes to oneDNN or to OpenBLAS by its shape alone
// (onednn_gemm_suits), so the pipelined run and the sequential reference use the same library for it; it is cut
// into blocks fixed by its shape (gemm_split.h) that the rank's threads compute side by side, each block on one
// library thread, so its bits do not depend on the thread count either. Under `precision: bf16` every product
// goes to oneDNN's matmul with its operands rounded to bf16 (fp32 accumulation and output), in the same blocks.
#include <algorithm>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "kernels/cpu/bf16_operands.h"
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

// Computes `whole` in the blocks gemm_split cuts it into, each one `block(part)` on one thread of the rank's team,
// and throws if any failed. `what` names the arithmetic in the error.
template <typename Block>
void run_split(const Product& whole, const char* what, const Block& block) {
  const GemmSplit split = gemm_split(whole.m, whole.n, whole.k);
  // The rank's threads (cpu_threads, or the host's BLAS setting) run the blocks; the library inside each block runs
  // on one, and the setting is back once no product runs.
  const BlasHeldAtOneThread library_on_one_thread;
  std::vector<OnednnGemmResult> results(static_cast<size_t>(split.count), OnednnGemmResult::kDone);
  if (split.count == 1) {
    results[0] = block(whole);
  } else {
    run_blocks(split.count, library_on_one_thread.team_threads(),
               [&](int64_t j) { results[static_cast<size_t>(j)] = block(block_of(whole, split, j)); });
  }
  for (OnednnGemmResult result : results) {
    if (result == OnednnGemmResult::kDone) continue;
    const bool failed = result == OnednnGemmResult::kFailed;
    throw Error(ErrorCode::kInternal, std::string("gemm: oneDNN failed to ") +
                                          (failed ? "build or run " : "find a kernel for ") + what + " " +
                                          std::to_string(whole.m) + "x" + std::to_string(whole.k) + " by " +
                                          std::to_string(whole.k) + "x" + std::to_string(whole.n) + " product" +
                                          (failed ? " (out of memory?)" : ""));
  }
}

// `whole` with a and b rounded to bf16 once (the blocks share the copies) and fp32 accumulation and output.
void bf16_product(const Product& whole, int64_t a_size, int64_t b_size) {
  static thread_local std::vector<uint16_t> a16, b16;  // reused: a step multiplies the same shapes again
  to_bf16(whole.a, a_size, a16);
  to_bf16(whole.b, b_size, b16);
  // Plain pointers for the team: inside the lambda the thread_local names would mean each worker's own (empty) ones.
  const uint16_t* a_bits = a16.data();
  const uint16_t* b_bits = b16.data();
  run_split(whole, "a bf16", [&](const Product& p) {
    return onednn_gemm_bf16(p.ta, p.tb, p.m, p.n, p.k, p.alpha, a_bits + (p.a - whole.a), p.lda,
                            b_bits + (p.b - whole.b), p.ldb, p.beta, p.c, p.ldc);
  });
}

}  // namespace

void CpuBackend::set_gemm_precision(GemmPrecision precision) {
  if (precision == GemmPrecision::kBf16) {
    const std::string missing = onednn_bf16_gemm_missing();
    if (!missing.empty()) {
      throw Error(ErrorCode::kUnsupported, "precision: bf16 is not available on device cpu: " + missing +
                                               "; use precision: fp32 there");
    }
  } else if (precision == GemmPrecision::kTf32) {
    throw Error(ErrorCode::kUnsupported, "precision: tf32 is not available on device cpu: the CPU has no TF32 mode; "
                                         "use fp32, or bf16 where the CPU has avx512_bf16");
  }
  precision_ = precision;
}

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
  if (precision_ == GemmPrecision::kBf16) {
    bf16_product(whole, a.size(), b.size());
    return;
  }
  const bool routed = onednn_gemm_suits(ta, tb, m, n, k);
  run_split(whole, "an fp32", [&](const Product& p) { return compute_product(p, routed); });
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
