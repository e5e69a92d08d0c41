// The uniform [-1, 1] numbers the synthetic sources draw (Random123 Philox4x64): number i of a stream (key; a, b, c)
// is lane i % 4 of the counter (a, b, i / 4, c). Any run of a stream can be drawn alone and gives the same numbers
// as the whole stream, which is what lets a rank generate its own rows, or its own block of a field, by itself.
#pragma once

#include <Random123/philox.h>

#include <Random123/uniform.hpp>
#include <cstdint>

namespace sluice::data {

using Philox = r123::Philox4x64;

// values[0, count) = numbers first .. first + count - 1 of the stream (key; a, b, c).
inline void fill_uniform_run(const Philox::key_type& key, uint64_t a, uint64_t b, uint64_t c, int64_t first,
                             int64_t count, float* values) {
  Philox generate;
  int64_t i = first;
  const int64_t end = first + count;
  while (i < end) {
    const Philox::ctr_type counter = {{a, b, static_cast<uint64_t>(i / 4), c}};
    const Philox::ctr_type random = generate(counter, key);
    for (int64_t lane = i % 4; lane < 4 && i < end; ++lane, ++i) {
      values[i - first] = r123::uneg11<float>(random.v[lane]);
    }
  }
}

}  // namespace sluice::data
