// The block of a field sample a data source fills: all channels, and per spatial dimension the points
// [offset, offset + extent) of the GLOBAL field (a config::DomainBox). Shared by the synthetic field generator and the
// HDF5 reader, so both accept, refuse and lay out a block the same way: [C][block extents], the last extent fastest,
// as a whole sample is (core/config/sample_shape.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/config/domain_layout.h"
#include "core/config/sample_shape.h"

namespace sluice::data {

// The whole field of `shape` ([C, D1..Dk]) as one box.
config::DomainBox whole_box(const config::SampleShape& shape);

// Points per channel of the box (the product of its extents).
int64_t box_points(const config::DomainBox& box);

// "offset [2, 0] extent [3, 8]"
std::string box_text(const config::DomainBox& box);

// Throws Error(kInvalidArgument), starting with `what` and naming the spatial dimension, unless `box` has one offset
// and one extent per spatial dimension of the field `shape`, every extent is positive and every box lies inside the
// field (0 <= offset, offset + extent <= the field's extent).
void check_box(const config::DomainBox& box, const config::SampleShape& shape, const std::string& what);

// The box of the field `out` that holds the same part of the sample as `box` of the field `in` (same number of
// spatial dimensions): offset and extent times out's extent over in's per dimension. Throws Error(kConfig) naming the
// dimension when that is not a whole number of points (the output's resolution does not divide the block).
config::DomainBox scaled_box(const config::DomainBox& box, const config::SampleShape& in,
                             const config::SampleShape& out);

// The global row-major point index (over the spatial extents of `shape`) of the global coordinates `point`.
int64_t global_point_index(const config::SampleShape& shape, const std::vector<int64_t>& point);

// Calls run(outer, index) once per line of the box along its last dimension, in row-major order: `outer` holds the
// global coordinates of the line's first point (its last entry the box's offset there), `index` counts the lines from
// 0 (the line starts at index · last extent in the block's points).
template <typename Run>
void for_each_box_line(const config::DomainBox& box, Run&& run) {
  const size_t dims = box.offset.size();
  std::vector<int64_t> point(box.offset);
  int64_t lines = 1;
  for (size_t d = 0; d + 1 < dims; ++d) lines *= box.extent[d];
  for (int64_t index = 0; index < lines; ++index) {
    run(static_cast<const std::vector<int64_t>&>(point), index);
    for (size_t d = dims - 1; d-- > 0;) {  // odometer over the dimensions before the last
      if (++point[d] < box.offset[d] + box.extent[d]) break;
      point[d] = box.offset[d];
    }
  }
}

}  // namespace sluice::data
