// Counter-based random numbers (Philox4x64-10 from Random123). A stream is named by what it is FOR, never by
// the order in which it is drawn, so a recomputed forward gets the same dropout mask and parameter init does
// not depend on how the layers are partitioned over ranks.
//   key     = {seed, step}
//   counter = {element block, micro-batch, global layer index, purpose}
// Element i of a stream is word i % 4 of the Philox output for block i / 4.
#pragma once

#include <cstdint>

namespace sluice::kernels {

// What a stream is drawn for; keeps dropout and the init of each parameter apart.
enum class RngPurpose : uint64_t {
  kDropout = 0,
  kInitBase = 16,  // parameter p of a layer uses kInitBase + p
};

struct RngStream {
  uint64_t seed = 0;
  uint64_t step = 0;
  uint64_t microbatch = 0;
  uint64_t layer = 0;  // global layer index
  uint64_t purpose = static_cast<uint64_t>(RngPurpose::kDropout);
};

// Stream for the dropout mask of one layer in one micro-batch of one optimizer step.
RngStream dropout_stream(uint64_t seed, uint64_t step, int microbatch, int layer);
// Stream for the initial values of parameter number `parameter` (0-based, in the layer's own order).
RngStream init_stream(uint64_t seed, int layer, int parameter);

// Uniform floats in [0, 1) for elements [first, first + count) of `stream`.
void uniform_floats(const RngStream& stream, uint64_t first, uint64_t count, float* out);

}  // namespace sluice::kernels
