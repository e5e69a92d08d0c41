// Test helpers for the tiled ops (kernels/tiled_conv.h): a global field cut into blocks of a split, each block padded
// by a periodic halo, as the halo exchange (core/comm) hands it to a rank; and the blocks put back together.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "kernels/tensor.h"

namespace sluice::kernels {

// One block of a split: its first point and extent per spatial dimension.
struct Block {
  std::vector<int64_t> offset;
  std::vector<int64_t> extent;
};

// The blocks of a split given as the block extents along each dimension (row-major, last dimension fastest).
inline std::vector<Block> blocks_of(const std::vector<std::vector<int64_t>>& cuts) {
  std::vector<Block> blocks(1);
  for (const std::vector<int64_t>& extents : cuts) {
    std::vector<Block> next;
    for (const Block& block : blocks) {
      int64_t offset = 0;
      for (int64_t extent : extents) {
        Block b = block;
        b.offset.push_back(offset);
        b.extent.push_back(extent);
        next.push_back(b);
        offset += extent;
      }
    }
    blocks = next;
  }
  return blocks;
}

namespace split_field_detail {

inline std::array<int64_t, 3> three(const std::vector<int64_t>& values, int64_t missing) {
  std::array<int64_t, 3> out{missing, missing, missing};
  const size_t lead = 3 - values.size();
  for (size_t d = 0; d < values.size(); ++d) out[lead + d] = values[d];
  return out;
}

inline int64_t wrap(int64_t i, int64_t n) { return ((i % n) + n) % n; }

}  // namespace split_field_detail

// The block of `field` [samples][channels · Π global] padded by low/high per dimension, the halo wrapping
// periodically across the global edges.
inline Tensor padded_block(const Tensor& field, int64_t channels, const std::vector<int64_t>& global,
                           const Block& block, const std::vector<int64_t>& low, const std::vector<int64_t>& high) {
  using split_field_detail::three;
  using split_field_detail::wrap;
  std::vector<int64_t> padded = block.extent;
  for (size_t d = 0; d < padded.size(); ++d) padded[d] += low[d] + high[d];
  const auto g = three(global, 1), p = three(padded, 1), start = three(block.offset, 0), lo = three(low, 0);
  const int64_t points = p[0] * p[1] * p[2], global_points = g[0] * g[1] * g[2];
  Tensor out = Tensor::host(field.rows(), channels * points);
  for (int64_t n = 0; n < field.rows(); ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t i = 0; i < points; ++i) {
        const int64_t i0 = i / (p[1] * p[2]), i1 = i / p[2] % p[1], i2 = i % p[2];
        const int64_t s0 = wrap(start[0] + i0 - lo[0], g[0]), s1 = wrap(start[1] + i1 - lo[1], g[1]);
        const int64_t s2 = wrap(start[2] + i2 - lo[2], g[2]);
        out.at(n, c * points + i) = field.at(n, c * global_points + (s0 * g[1] + s1) * g[2] + s2);
      }
    }
  }
  return out;
}

// field's block = values [samples][channels · Π block.extent].
inline void place_block(const Tensor& values, int64_t channels, const std::vector<int64_t>& global,
                        const Block& block, Tensor& field) {
  using split_field_detail::three;
  const auto g = three(global, 1), e = three(block.extent, 1), start = three(block.offset, 0);
  const int64_t points = e[0] * e[1] * e[2], global_points = g[0] * g[1] * g[2];
  for (int64_t n = 0; n < values.rows(); ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t i = 0; i < points; ++i) {
        const int64_t i0 = i / (e[1] * e[2]), i1 = i / e[2] % e[1], i2 = i % e[2];
        const int64_t at = ((start[0] + i0) * g[1] + start[1] + i1) * g[2] + start[2] + i2;
        field.at(n, c * global_points + at) = values.at(n, c * points + i);
      }
    }
  }
}

}  // namespace sluice::kernels
