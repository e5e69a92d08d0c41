#include "kernels/cpu/bf16_operands.h"

#include <cstring>

namespace sluice::kernels {

uint16_t to_bf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  // Adding 0x7fff plus the lowest kept bit rounds the dropped half to nearest, ties to even; a carry into the
  // exponent is the right rounding too (up to the next binade, or to infinity past the largest finite bf16). A NaN
  // keeps its sign and top bits and is made quiet. Branch-free, so the loop below vectorizes.
  const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  const uint32_t quiet_nan = (bits >> 16) | 0x0040u;
  return static_cast<uint16_t>((bits & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
}

float from_bf16(uint16_t bits) {
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float x;
  std::memcpy(&x, &wide, sizeof x);
  return x;
}

void to_bf16(const float* x, int64_t count, std::vector<uint16_t>& out) {
  out.resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) out[static_cast<size_t>(i)] = to_bf16(x[i]);
}

}  // namespace sluice::kernels
