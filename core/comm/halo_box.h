// Rectangular regions of a padded field block, copied to and from contiguous message buffers: the local part of
// a halo exchange (halo_exchange.cc), no MPI. An array here is [planes][n0][n1][n2] (planes = samples x channels;
// fields with fewer than 3 spatial dimensions have leading extents of 1), C order.
#pragma once

#include <array>
#include <cstdint>

namespace sluice::comm {

struct HaloBox {
  std::array<int64_t, 3> begin{};
  std::array<int64_t, 3> end{};  // exclusive
  int64_t points() const { return (end[0] - begin[0]) * (end[1] - begin[1]) * (end[2] - begin[2]); }
};

struct HaloArray {
  int64_t planes = 1;
  std::array<int64_t, 3> extents{1, 1, 1};
};

// Copies `box` of every plane of `array` (shape `shape`) into `out`, plane by plane, box points in C order.
void pack_box(const float* array, const HaloArray& shape, const HaloBox& box, float* out);
// The inverse: writes `in` (laid out as pack_box writes) into `box` of every plane of `array`.
void unpack_box(const float* in, const HaloArray& shape, const HaloBox& box, float* array);
// Writes zeros into `box` of every plane of `array`.
void zero_box(const HaloArray& shape, const HaloBox& box, float* array);
// Like unpack_box, but adds: array[point] = array[point] + in[point], one addition per point.
void add_box(const float* in, const HaloArray& shape, const HaloBox& box, float* array);

}  // namespace sluice::comm
