// One row-major product on the calling thread, by the library the route picks for its shape: the CPU backend's
// gemm blocks (cpu_gemm.cc) and the attention's per-head products (cpu_attention.cc) both come here, so a shape
// is computed by one library wherever it occurs, and the pipelined run and the sequential reference agree bit
// for bit.
#pragma once

#include <cstdint>

#include "kernels/cpu/onednn_gemm.h"

namespace sluice::kernels {

// One product's operands as raw row-major views: c (m x n) = alpha op(a) op(b) + beta c.
struct Product {
  bool ta, tb;
  int64_t m, n, k;
  float alpha, beta;
  const float* a;
  int64_t lda;
  const float* b;
  int64_t ldb;
  float* c;
  int64_t ldc;
};

// `p` on the calling thread: through oneDNN where `routed` (onednn_gemm_suits of the whole product the block
// belongs to) and oneDNN implements the shape, else OpenBLAS (held at one thread by the caller). kFailed: oneDNN
// failed to build or run it; c is undefined.
OnednnGemmResult compute_product(const Product& p, bool routed);

// `p` whole on the calling thread, routed by its own shape; throws Error(kInternal) naming the shape if oneDNN fails.
void routed_product(const Product& p);

}  // namespace sluice::kernels
