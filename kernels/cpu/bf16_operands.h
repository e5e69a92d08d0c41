// fp32 operands rounded to bf16 for the CPU backend's bf16 products (config key `precision: bf16`,
// kernels/cpu/onednn_gemm.h): bf16 is the upper 16 bits of an fp32 (8 exponent bits, 8 significant bits with the
// implicit one), so a value keeps its range and loses 16 bits of its significand.
#pragma once

#include <cstdint>
#include <vector>

namespace sluice::kernels {

// x rounded to the nearest bf16, ties to even (what oneDNN's own conversions and cuBLAS's do); NaN stays a
// (quiet) NaN, infinities and values that round past the largest bf16 become infinities.
uint16_t to_bf16(float x);
float from_bf16(uint16_t bits);

// to_bf16 of x[0 .. count), in `out` (resized). Elementwise, so the bits do not depend on who calls.
void to_bf16(const float* x, int64_t count, std::vector<uint16_t>& out);

}  // namespace sluice::kernels
