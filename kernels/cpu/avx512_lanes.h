// Sixteen-lane AVX-512F code beside a portable path: the run-time check and the compiler details, in one place for
// the GELU (gelu_lanes.h), LayerNorm's rows (layernorm_rows.cc), the token transposes (transpose_tiles.cc) and the
// AdamW update (cpu_optimizer.cc).
// Each of them gives the same bits on either path, so the choice, fixed per machine, never changes a result.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// GCC 12.2's AVX-512 intrinsics start several operations from a deliberately undefined vector and then warn about
// it (GCC bug 105593, fixed in 12.3): quiet that warning for the header's own lines, and, between
// SLUICE_AVX512_CODE_BEGIN and SLUICE_AVX512_CODE_END, where the intrinsics are inlined.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#define SLUICE_AVX512_LANES 1

// A function holding AVX-512F code: compiled for it whatever the target's flags; called only where
// avx512_available().
#define SLUICE_AVX512 __attribute__((target("avx512f")))

#if defined(__GNUC__) && !defined(__clang__)
#define SLUICE_AVX512_CODE_BEGIN \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#define SLUICE_AVX512_CODE_END _Pragma("GCC diagnostic pop")
#else
#define SLUICE_AVX512_CODE_BEGIN
#define SLUICE_AVX512_CODE_END
#endif

namespace sluice::kernels {

// Whether this CPU runs the sixteen-lane code (asked once per process).
inline bool avx512_available() {
  static const bool available = __builtin_cpu_supports("avx512f");
  return available;
}

}  // namespace sluice::kernels
#endif
