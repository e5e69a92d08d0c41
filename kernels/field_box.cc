#include "kernels/field_box.h"

#include <array>
#include <string>
#include <utility>

#include "core/common/error.h"

namespace sluice::kernels {
namespace {

int64_t product(const std::vector<int64_t>& values) {
  int64_t result = 1;
  for (int64_t v : values) result *= v;
  return result;
}

[[noreturn]] void fail(const std::string& problem) {
  throw Error(ErrorCode::kInvalidArgument, "copy_field_box: " + problem);
}

void check_box(const FieldBox& b, const Tensor& source, const Tensor& destination) {
  const size_t dims = b.box.size();
  if (dims < 1 || dims > 3 || b.source_extents.size() != dims || b.source_origin.size() != dims ||
      b.destination_extents.size() != dims || b.destination_origin.size() != dims) {
    fail("the box, its origins and the extents need one value per spatial dimension (1 to 3)");
  }
  for (size_t d = 0; d < dims; ++d) {
    const bool inside = b.box[d] >= 0 && b.source_origin[d] >= 0 && b.destination_origin[d] >= 0 &&
                        b.source_origin[d] + b.box[d] <= b.source_extents[d] &&
                        b.destination_origin[d] + b.box[d] <= b.destination_extents[d];
    if (!inside) {
      fail("a box of " + std::to_string(b.box[d]) + " at " + std::to_string(b.source_origin[d]) + " -> " +
           std::to_string(b.destination_origin[d]) + " in dimension " + std::to_string(d) +
           " does not lie inside the extents " + std::to_string(b.source_extents[d]) + " -> " +
           std::to_string(b.destination_extents[d]));
    }
  }
  if (source.cols() != b.channels * product(b.source_extents) ||
      destination.cols() != b.channels * product(b.destination_extents) || source.rows() != destination.rows()) {
    fail("source [" + std::to_string(source.rows()) + "][" + std::to_string(source.cols()) + "] and destination [" +
         std::to_string(destination.rows()) + "][" + std::to_string(destination.cols()) +
         "] do not hold the same samples of " + std::to_string(b.channels) + " channels over their extents");
  }
}

// Extents and origin as three dimensions, missing leading ones of extent 1 at 0.
std::array<int64_t, 3> three(const std::vector<int64_t>& values, int64_t missing) {
  std::array<int64_t, 3> out{missing, missing, missing};
  const size_t lead = 3 - values.size();
  for (size_t d = 0; d < values.size(); ++d) out[lead + d] = values[d];
  return out;
}

int64_t offset_of(const std::array<int64_t, 3>& extents, int64_t channel, int64_t i0, int64_t i1, int64_t i2) {
  return ((channel * extents[0] + i0) * extents[1] + i1) * extents[2] + i2;
}

}  // namespace

void copy_field_box(Backend& backend, const FieldBox& b, const Tensor& source, Tensor& destination) {
  check_box(b, source, destination);
  if (product(b.box) == 0 || source.rows() == 0) return;
  const auto box = three(b.box, 1), se = three(b.source_extents, 1), de = three(b.destination_extents, 1);
  const auto so = three(b.source_origin, 0), dof = three(b.destination_origin, 0);
  for (int64_t c = 0; c < b.channels; ++c) {
    for (int64_t i0 = 0; i0 < box[0]; ++i0) {
      for (int64_t i1 = 0; i1 < box[1]; ++i1) {
        const int64_t from = offset_of(se, c, so[0] + i0, so[1] + i1, so[2]);
        const int64_t to = offset_of(de, c, dof[0] + i0, dof[1] + i1, dof[2]);
        if (b.add) {
          backend.add_columns(source, from, destination, to, box[2]);
        } else {
          backend.copy_columns(source, from, destination, to, box[2]);
        }
      }
    }
  }
}

FieldBox box_out_of(int64_t channels, const std::vector<int64_t>& field, const std::vector<int64_t>& origin,
                    const std::vector<int64_t>& box) {
  FieldBox b;
  b.channels = channels;
  b.source_extents = field;
  b.source_origin = origin;
  b.destination_extents = box;
  b.destination_origin.assign(box.size(), 0);
  b.box = box;
  return b;
}

FieldBox box_into(int64_t channels, const std::vector<int64_t>& field, const std::vector<int64_t>& origin,
                  const std::vector<int64_t>& box) {
  FieldBox b = box_out_of(channels, field, origin, box);
  std::swap(b.source_extents, b.destination_extents);
  std::swap(b.source_origin, b.destination_origin);
  return b;
}

}  // namespace sluice::kernels
