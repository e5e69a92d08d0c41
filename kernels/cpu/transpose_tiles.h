// A row-major matrix transposed (out [cols][rows] = in [rows][cols]ᵀ): the transformer's [D, T] <-> token-rows
// layout changes (cpu_attention.cc), at every block's entry and exit. Copies only, so every path gives the same
// bits; on CPUs with AVX-512F (chosen at run time as the GELU's sixteen lanes are) whole 16 x 16 blocks go
// through registers, the edges element by element.
#pragma once

#include <cstdint>

namespace sluice::kernels {

void transpose_matrix(const float* in, int64_t rows, int64_t cols, float* out);

// The same with the element-by-element path forced (for tests).
void transpose_matrix_portable(const float* in, int64_t rows, int64_t cols, float* out);

}  // namespace sluice::kernels
