// Whether the CPU backend's products may go to oneDNN (kernels/cpu/onednn_gemm.h), from the environment
// variable SLUICE_ONEDNN_GEMM, read once per process:
//   auto  (unset or empty) every product oneDNN computes where OpenBLAS runs a fallback core (below); else, on
//         CPUs with AVX-512, the large weight products, where the route was measured; OpenBLAS elsewhere
//   on    every product oneDNN computes, on any CPU oneDNN has kernels for, so tests and CI cover the route and the
//         thread blocks everywhere
//   off   never: every product on OpenBLAS (to compare, or to rule the route out when chasing a problem)
// It changes which library computes a product, so a run and its resume should see the same setting.
#pragma once

#include <cstdint>

namespace sluice::kernels {

enum class OnednnRoute { kAuto, kOn, kOff };

// The setting for this process. An unknown value is an Error (kInvalidArgument) naming the variable, the value
// and the valid ones, at the first product that asks.
OnednnRoute onednn_route_setting();

// Parses one value of the variable (exposed for tests); same error as above.
OnednnRoute parse_onednn_route(const char* text);

// Which products go to oneDNN in this process.
enum class GemmRoute {
  kNone,   // every product on OpenBLAS
  kLarge,  // x W^T and dy W with a weight of at least 128 x 128 and 2^20 multiply-adds (issue 17)
  kAll,    // every product oneDNN computes: dy^T x and the attention's per-head products too
};

// Whether `corename` (OpenBLAS's openblas_get_corename()) is one of its x86 cores whose sgemm kernels predate
// AVX2 (Prescott, Core2, Nehalem, Sandybridge, ...; case ignored). A DYNAMIC_ARCH OpenBLAS picks one of them for a
// CPU newer than it knows: 0.3.21 runs Prescott's SSE3 kernels on an Emerald Rapids (bench/README.md, "Operators").
// Null or unknown names are not fallbacks.
bool openblas_core_is_fallback(const char* corename);

// The route for a setting, OpenBLAS's core and the instruction sets oneDNN reports (dnnl_get_effective_cpu_isa):
// a pure function, exposed for tests; onednn_gemm.cc computes it once per process.
GemmRoute gemm_route_for(OnednnRoute setting, const char* openblas_core, bool onednn_avx2, bool onednn_avx512);

// Whether `route` sends c = alpha op(a) op(b) + beta c (m x n, inner k) to oneDNN: by the shape alone.
bool gemm_route_covers(GemmRoute route, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k);

// "OpenBLAS", "oneDNN for large weight products, else OpenBLAS", "oneDNN": for the start report.
const char* gemm_route_text(GemmRoute route);

}  // namespace sluice::kernels
