// Copying a box of a field between two field tensors [samples][channels · Π extents] (C order, the last extent
// fastest), on any backend: one Backend::copy_columns per row of the box (a run along the last dimension) and
// channel. What the tiled ops (kernels/tiled_conv.h) use to cut a tile's window out of a padded block and to put a
// tile's result into the block; a plain copy, so the bits are the source's.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/backend.h"

namespace sluice::kernels {

struct FieldBox {
  int64_t channels = 0;
  std::vector<int64_t> source_extents;       // spatial extents of each sample's field in `source`
  std::vector<int64_t> source_origin;        // the box's first point there
  std::vector<int64_t> destination_extents;  // the same in `destination`
  std::vector<int64_t> destination_origin;
  std::vector<int64_t> box;                  // the box's extents
  bool add = false;                          // destination += source (Backend::add_columns) instead of =
};

// destination's box = (or +=) source's box, every sample (row) and channel. Both tensors must have the same rows and
// the widths of their extents; the box must lie inside both (Error(kInvalidArgument) naming the dimension
// otherwise). Source and destination may be one tensor when the two boxes do not overlap.
void copy_field_box(Backend& backend, const FieldBox& box, const Tensor& source, Tensor& destination);

// The box of extents `box` at `origin` of a field of extents `field`, copied out into a tensor of exactly the box's
// extents (a tile or a tile's window cut out of a block), or the reverse (a tile's result put into the block).
FieldBox box_out_of(int64_t channels, const std::vector<int64_t>& field, const std::vector<int64_t>& origin,
                    const std::vector<int64_t>& box);
FieldBox box_into(int64_t channels, const std::vector<int64_t>& field, const std::vector<int64_t>& origin,
                  const std::vector<int64_t>& box);

}  // namespace sluice::kernels
