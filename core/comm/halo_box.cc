#include "core/comm/halo_box.h"

#include <algorithm>

namespace sluice::comm {
namespace {

// Calls run(array_offset, buffer_offset, length) for each contiguous run of `box` (a row along the last
// dimension) in every plane, in C order.
template <typename Run>
void for_each_row(const HaloArray& shape, const HaloBox& box, Run run) {
  const auto& n = shape.extents;
  const int64_t plane = n[0] * n[1] * n[2];
  const int64_t length = box.end[2] - box.begin[2];
  if (length <= 0 || box.points() <= 0) return;
  int64_t buffer = 0;
  for (int64_t p = 0; p < shape.planes; ++p) {
    for (int64_t i = box.begin[0]; i < box.end[0]; ++i) {
      for (int64_t j = box.begin[1]; j < box.end[1]; ++j) {
        run(p * plane + (i * n[1] + j) * n[2] + box.begin[2], buffer, length);
        buffer += length;
      }
    }
  }
}

}  // namespace

void pack_box(const float* array, const HaloArray& shape, const HaloBox& box, float* out) {
  for_each_row(shape, box, [&](int64_t at, int64_t buffer, int64_t length) {
    std::copy(array + at, array + at + length, out + buffer);
  });
}

void unpack_box(const float* in, const HaloArray& shape, const HaloBox& box, float* array) {
  for_each_row(shape, box, [&](int64_t at, int64_t buffer, int64_t length) {
    std::copy(in + buffer, in + buffer + length, array + at);
  });
}

void zero_box(const HaloArray& shape, const HaloBox& box, float* array) {
  for_each_row(shape, box,
               [&](int64_t at, int64_t, int64_t length) { std::fill(array + at, array + at + length, 0.0f); });
}

void add_box(const float* in, const HaloArray& shape, const HaloBox& box, float* array) {
  for_each_row(shape, box, [&](int64_t at, int64_t buffer, int64_t length) {
    for (int64_t x = 0; x < length; ++x) array[at + x] += in[buffer + x];
  });
}

}  // namespace sluice::comm
