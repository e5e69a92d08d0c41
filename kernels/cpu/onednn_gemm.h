// Row-major single-precision GEMMs through oneDNN's matmul primitive, for the shapes where it beats OpenBLAS.
//
// Why: OpenBLAS 0.3.21 copies the whole weight into its panel layout on every call. For a pipeline's 32-row
// micro-batches against a 1024x1024 weight that copy costs about as much as the multiply (issue 17). oneDNN's
// matmul primitive (x W^T, weight read in place through strides) and its sgemm (dy W) took about 0.73x and 0.75x
// of OpenBLAS's CPU time there (docs/BUILD_SETTINGS.md, "oneDNN"). The gradient product dy^T x (op(a)
// transposed) stays on OpenBLAS, which is as fast there. Where OpenBLAS runs a fallback core without AVX2 (a CPU
// newer than it knows), every product goes to oneDNN (kernels/cpu/onednn_route.h).
#pragma once

#include <cstdint>
#include <string>

#include "kernels/cpu/onednn_route.h"

namespace sluice::kernels {

// This process's route: gemm_route_for(SLUICE_ONEDNN_GEMM, OpenBLAS's core, oneDNN's instruction sets), computed
// once, like OpenBLAS's own kernel choice.
GemmRoute gemm_route_on_this_machine();

// "OpenBLAS core Prescott, products on oneDNN": the core and the route, for the start report.
std::string cpu_products_text();

// Whether the CPU backend computes c = alpha op(a) op(b) + beta c through oneDNN. Decided by the shape and the
// machine (gemm_route_on_this_machine) alone, never by timing, by the BLAS thread count or by which thread asks,
// so every run on a machine computes a product with the same library and the same bits: the pipelined run and the
// sequential reference, a run and its resume on another core count, `sluice_predict` and the model API's predict.
// oneDNN itself always runs on ONE thread: with more it splits the sum over k differently for other thread counts,
// which would make the bits depend on `cpu_threads`. A rank's threads share a product out in blocks fixed by the
// shape instead (kernels/cpu/gemm_split.h), each block one call here; the route is decided on the whole product.
bool onednn_gemm_suits(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k);

enum class OnednnGemmResult {
  kDone,
  kUnavailable,  // oneDNN does not implement the product (or was built for another threading runtime); c untouched
  kFailed,       // building or running it failed (out of memory, say); c is undefined
};

// c (m x n) = alpha op(a) op(b) + beta c on one thread, all row-major with leading dimensions lda, ldb,
// ldc; beta = 0 overwrites c (NaNs included), as BLAS does. k >= 1. On kUnavailable the caller uses OpenBLAS;
// that answer depends on the shape and the machine only (oneDNN's "unimplemented"), so a shape never switches
// libraries mid-run; a transient failure (memory) is kFailed, an error, not a silent switch. Never changes the
// caller's OpenMP thread count: where it is not 1 already, it is set to 1 for the call and restored. Callable from
// several threads at once (each keeps its own primitives).
OnednnGemmResult onednn_gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
                             const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                             int64_t ldc);

// The same product with a and b in bf16 (the upper halves of fp32 values, rounded: kernels/cpu/bf16_operands.h),
// fp32 accumulation and fp32 c, through oneDNN's matmul primitive on one thread, every orientation (config key
// `precision: bf16` on a cpu stage). kUnavailable where oneDNN has no kernel for it or is not on OpenMP; the
// backend checks the CPU first (onednn_bf16_gemm_missing).
OnednnGemmResult onednn_gemm_bf16(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
                                  const uint16_t* a, int64_t lda, const uint16_t* b, int64_t ldb, float beta, float* c,
                                  int64_t ldc);

// "" where oneDNN runs bf16 products natively on this CPU (its instruction set includes avx512_core_bf16) on
// OpenMP; otherwise why not, for the refusal of `precision: bf16` ("this CPU lacks avx512_bf16: oneDNN's
// instruction set is avx512_core" and the like). Follows ONEDNN_MAX_CPU_ISA, which caps what oneDNN uses.
std::string onednn_bf16_gemm_missing();

}  // namespace sluice::kernels
