// Dropout on one block of a domain-split field: the checks of its public ops and the refusing default (docs/DOMAIN.md
// "The model's layers on a block"). The mask is keyed by the whole field's feature (kernels/rng.h FieldBlockKey).
#include <string>

#include "core/common/error.h"
#include "kernels/backend.h"
#include "kernels/shape_check.h"

namespace sluice::kernels {
namespace {

std::string extents_text(const std::vector<int64_t>& extents) {
  std::string text = "[";
  for (size_t d = 0; d < extents.size(); ++d) text += (d ? ", " : "") + std::to_string(extents[d]);
  return text + "]";
}

// The key describes a block inside its field, and the stream draws rows of the whole field.
void check_key(const char* op, const FieldBlockKey& key, const RngStream& stream) {
  const std::string where = std::string(op) + ": block " + extents_text(key.extent) + " at " +
                            extents_text(key.offset) + " of the field " + extents_text(key.global);
  const size_t dims = key.global.size();
  bool fits = dims >= 1 && key.offset.size() == dims && key.extent.size() == dims && key.channels >= 1;
  for (size_t d = 0; fits && d < dims; ++d) {
    fits = key.extent[d] >= 1 && key.offset[d] >= 0 && key.offset[d] + key.extent[d] <= key.global[d];
  }
  if (!fits) {
    throw Error(ErrorCode::kInvalidArgument, where + " with " + std::to_string(key.channels) +
                                                 " channels: not a block of at least one channel and point inside "
                                                 "its field");
  }
  if (stream.row_width != static_cast<uint64_t>(key.field_features())) {
    throw Error(ErrorCode::kInvalidArgument, where + ": the random stream draws rows of " +
                                                 std::to_string(stream.row_width) + " elements, the whole field has " +
                                                 std::to_string(key.field_features()) + " features");
  }
}

void check_block_dropout(const char* op, const Tensor& in, float p, const RngStream& stream,
                         const FieldBlockKey& key, const Tensor& out, const char* in_name, const char* out_name) {
  if (!(p >= 0.0f && p < 1.0f)) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string(op) + ": dropout probability must be in [0, 1), got " + std::to_string(p));
  }
  check_key(op, key, stream);
  require_shape(op, in_name, in, in.rows(), key.block_features());
  require_same_shape(op, out_name, out, in);
}

}  // namespace

void Backend::dropout_block_forward(const Tensor& x, float p, const RngStream& stream, const FieldBlockKey& key,
                                    Tensor& y) {
  const char* op = "dropout_block_forward";
  require_all_on_device(op, {{"x", &x}, {"y", &y}});
  check_block_dropout(op, x, p, stream, key, y, "x", "y");
  dropout_block_impl(x, p, stream, key, y);
}

void Backend::dropout_block_backward(const Tensor& dy, float p, const RngStream& stream, const FieldBlockKey& key,
                                     Tensor& dx) {
  const char* op = "dropout_block_backward";
  require_all_on_device(op, {{"dy", &dy}, {"dx", &dx}});
  check_block_dropout(op, dy, p, stream, key, dx, "dy", "dx");
  dropout_block_impl(dy, p, stream, key, dx);
}

// Only the CPU runs a domain-split field in this version (the halo exchange reads host memory).
void Backend::dropout_block_impl(const Tensor&, float, const RngStream&, const FieldBlockKey&, Tensor&) {
  throw Error(ErrorCode::kUnsupported, "dropout_block_forward / dropout_block_backward are not available on " +
                                           device_name() + " (a split field runs on the CPU backend in this version)");
}

}  // namespace sluice::kernels
