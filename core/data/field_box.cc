#include "core/data/field_box.h"

#include "core/common/error.h"

namespace sluice::data {

namespace {

std::string list_text(const std::vector<int64_t>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

// As model.inputs names them: 1-based after the channels.
std::string dimension_text(size_t d) { return "spatial dimension " + std::to_string(d + 1); }

}  // namespace

config::DomainBox whole_box(const config::SampleShape& shape) {
  config::DomainBox box;
  for (size_t d = 1; d < shape.size(); ++d) {
    box.offset.push_back(0);
    box.extent.push_back(shape[d]);
  }
  return box;
}

int64_t box_points(const config::DomainBox& box) {
  int64_t points = 1;
  for (int64_t e : box.extent) points *= e;
  return points;
}

std::string box_text(const config::DomainBox& box) {
  return "offset " + list_text(box.offset) + " extent " + list_text(box.extent);
}

void check_box(const config::DomainBox& box, const config::SampleShape& shape, const std::string& what) {
  const size_t dims = shape.empty() ? 0 : shape.size() - 1;
  if (!config::is_field(shape) || box.offset.size() != dims || box.extent.size() != dims) {
    throw Error(ErrorCode::kInvalidArgument,
                what + ": the block (" + box_text(box) + ") needs one offset and one extent per spatial dimension of " +
                    "the field " + config::shape_text(shape) + " (" + std::to_string(dims) + ")");
  }
  for (size_t d = 0; d < dims; ++d) {
    const int64_t begin = box.offset[d], extent = box.extent[d], global = shape[d + 1];
    if (begin < 0 || extent < 1 || begin > global - extent) {
      throw Error(ErrorCode::kInvalidArgument,
                  what + ": the block (" + box_text(box) + ") spans points [" + std::to_string(begin) + ", " +
                      std::to_string(begin + extent) + ") in " + dimension_text(d) + ", but the field " +
                      config::shape_text(shape) + " has [0, " + std::to_string(global) +
                      ") there (a block must be non-empty and inside the field)");
    }
  }
}

config::DomainBox scaled_box(const config::DomainBox& box, const config::SampleShape& in,
                             const config::SampleShape& out) {
  config::DomainBox scaled;
  for (size_t d = 0; d < box.offset.size(); ++d) {
    const int64_t from = in[d + 1], to = out[d + 1];
    const int64_t begin = box.offset[d] * to, end = (box.offset[d] + box.extent[d]) * to;
    if (begin % from != 0 || end % from != 0) {
      throw Error(ErrorCode::kConfig,
                  "data on a block: the model's output field " + config::shape_text(out) + " has " +
                      std::to_string(to) + " points in " + dimension_text(d) + " where its input " +
                      config::shape_text(in) + " has " + std::to_string(from) + ", so the input block's points [" +
                      std::to_string(box.offset[d]) + ", " + std::to_string(box.offset[d] + box.extent[d]) +
                      ") there are no whole block of the output (the block's cuts times " + std::to_string(to) + "/" +
                      std::to_string(from) + " must be whole points)");
    }
    scaled.offset.push_back(begin / from);
    scaled.extent.push_back(end / from - begin / from);
  }
  return scaled;
}

int64_t global_point_index(const config::SampleShape& shape, const std::vector<int64_t>& point) {
  int64_t index = 0;
  for (size_t d = 0; d < point.size(); ++d) index = index * shape[d + 1] + point[d];
  return index;
}

}  // namespace sluice::data
