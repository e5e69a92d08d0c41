// Size arithmetic that cannot wrap. Sizes come from configs and from the C API (rows × features, dims of a
// checkpoint dataset); a product that wraps around becomes a small or negative allocation and then a crash far
// from the cause. Every size product goes through these, which name what was being computed instead.
#pragma once

#include <cstdint>
#include <string>

#include "core/common/error.h"

namespace sluice {

// a × b, or Error(code, "<what>: a × b overflows a 64-bit size"). `what` is only turned into text on failure.
inline int64_t checked_mul(int64_t a, int64_t b, const char* what, ErrorCode code = ErrorCode::kInvalidArgument) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) {
    throw Error(code, std::string(what) + ": " + std::to_string(a) + " × " + std::to_string(b) +
                          " overflows a 64-bit size");
  }
  return product;
}

// a + b, or Error(code, "<what>: a + b overflows a 64-bit size").
inline int64_t checked_add(int64_t a, int64_t b, const char* what, ErrorCode code = ErrorCode::kInvalidArgument) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    throw Error(code, std::string(what) + ": " + std::to_string(a) + " + " + std::to_string(b) +
                          " overflows a 64-bit size");
  }
  return sum;
}

// Bytes of `count` floats (count × 4), checked like checked_mul.
inline int64_t checked_float_bytes(int64_t count, const char* what, ErrorCode code = ErrorCode::kInvalidArgument) {
  return checked_mul(count, static_cast<int64_t>(sizeof(float)), what, code);
}

}  // namespace sluice
