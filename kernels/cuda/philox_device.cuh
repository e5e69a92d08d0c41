// The device twin of kernels/rng.cc's uniform_floats: same Philox4x64-10 key and counter layout and the same
// 24-bit float conversion, so element i of a stream is the same float on CPU and GPU and dropout masks match.
#pragma once

#include <Random123/philox.h>

#include <cstdint>

#include "kernels/rng.h"

namespace sluice::kernels::cuda_launch {

// The four uniforms of Philox block `block` of sample `sample`'s sequence in `rng` (a flat stream has the one
// sequence of sample rng.first_sample: elements 4*block .. 4*block+3; a per-sample stream gives each row its own).
__device__ inline void uniform_block(const RngStream& rng, uint64_t sample, uint64_t block, float out[4]) {
  r123::Philox4x64 philox;
  const r123::Philox4x64::key_type key = {{rng.seed, 0}};
  const r123::Philox4x64::ctr_type counter = {{block, sample, rng.layer, rng.purpose}};
  const r123::Philox4x64::ctr_type random = philox(counter, key);
  for (int w = 0; w < 4; ++w) out[w] = static_cast<float>(random.v[w] >> 40) * (1.0f / 16777216.0f);
}

}  // namespace sluice::kernels::cuda_launch
