#include "kernels/rng.h"

#include <Random123/philox.h>

namespace sluice::kernels {
namespace {

// The top 24 bits fill a float mantissa exactly, so every value is representable and strictly below 1.
float to_unit_float(uint64_t bits) { return static_cast<float>(bits >> 40) * (1.0f / 16777216.0f); }

}  // namespace

RngStream dropout_stream(uint64_t seed, int layer, uint64_t first_sample, int64_t features) {
  return RngStream{seed, static_cast<uint64_t>(layer), static_cast<uint64_t>(RngPurpose::kDropout), first_sample,
                   static_cast<uint64_t>(features)};
}

RngStream init_stream(uint64_t seed, int layer, int parameter) {
  return RngStream{seed, static_cast<uint64_t>(layer),
                   static_cast<uint64_t>(RngPurpose::kInitBase) + static_cast<uint64_t>(parameter), 0, 0};
}

void uniform_floats(const RngStream& stream, uint64_t first, uint64_t count, float* out) {
  using Philox = r123::Philox4x64;
  Philox philox;
  const Philox::key_type key = {{stream.seed, 0}};
  Philox::ctr_type counter = {{0, 0, stream.layer, stream.purpose}};
  bool have = false;
  Philox::ctr_type random = {{0, 0, 0, 0}};
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t element = first + i;
    uint64_t sample = 0, position = element;  // position inside the sample's own sequence
    if (stream.row_width > 0) {
      sample = element / stream.row_width;
      position = element % stream.row_width;
    }
    sample += stream.first_sample;
    const uint64_t block = position / 4;
    if (!have || counter.v[0] != block || counter.v[1] != sample) {
      counter.v[0] = block;
      counter.v[1] = sample;
      random = philox(counter, key);
      have = true;
    }
    out[i] = to_unit_float(random.v[position % 4]);
  }
}

}  // namespace sluice::kernels
