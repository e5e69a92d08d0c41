#include "kernels/rng.h"

#include <Random123/philox.h>

namespace sluice::kernels {
namespace {

// The top 24 bits fill a float mantissa exactly, so every value is representable and strictly below 1.
float to_unit_float(uint64_t bits) { return static_cast<float>(bits >> 40) * (1.0f / 16777216.0f); }

}  // namespace

RngStream dropout_stream(uint64_t seed, uint64_t step, int microbatch, int layer) {
  return RngStream{seed, step, static_cast<uint64_t>(microbatch), static_cast<uint64_t>(layer),
                   static_cast<uint64_t>(RngPurpose::kDropout)};
}

RngStream init_stream(uint64_t seed, int layer, int parameter) {
  return RngStream{seed, 0, 0, static_cast<uint64_t>(layer),
                   static_cast<uint64_t>(RngPurpose::kInitBase) + static_cast<uint64_t>(parameter)};
}

void uniform_floats(const RngStream& stream, uint64_t first, uint64_t count, float* out) {
  using Philox = r123::Philox4x64;
  Philox philox;
  const Philox::key_type key = {{stream.seed, stream.step}};
  Philox::ctr_type counter = {{0, stream.microbatch, stream.layer, stream.purpose}};
  uint64_t block = ~uint64_t{0};
  Philox::ctr_type random = {{0, 0, 0, 0}};
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t element = first + i;
    if (element / 4 != block) {
      block = element / 4;
      counter.v[0] = block;
      random = philox(counter, key);
    }
    out[i] = to_unit_float(random.v[element % 4]);
  }
}

}  // namespace sluice::kernels
