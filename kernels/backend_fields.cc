// Backend's field ops (convolution, explicit padding, column blocks for skip connections, the per-point softmax
// cross-entropy): their argument checks, and the defaults that refuse them on a backend that has no implementation.
#include <string>

#include "core/common/error.h"
#include "kernels/backend.h"
#include "kernels/shape_check.h"

namespace sluice::kernels {
namespace {

// The geometry must be complete and self-consistent before any operand is measured against it.
ConvGeometry checked(const char* op, const ConvGeometry& geometry) {
  ConvGeometry completed = geometry;
  try {
    complete_conv_geometry(completed);
  } catch (const Error& e) {
    throw Error(ErrorCode::kInvalidArgument, std::string(op) + ": " + e.what());
  }
  if (completed.out != geometry.out) {
    throw Error(ErrorCode::kInvalidArgument, std::string(op) + ": the geometry's output extents are not its inputs' (" +
                                                 completed.describe() + ")");
  }
  return completed;
}

void check_pad(const char* op, const PadGeometry& geometry) {
  try {
    check_pad_geometry(geometry);
  } catch (const Error& e) {
    throw Error(ErrorCode::kInvalidArgument, std::string(op) + ": " + e.what());
  }
}

}  // namespace

void Backend::conv_forward(const ConvGeometry& geometry, const Tensor& x, const Tensor& weight, const Tensor* bias,
                           Tensor& y) {
  const char* op = "conv_forward";
  require_all_on_device(op, {{"x", &x}, {"weight", &weight}, {"y", &y}});
  if (bias != nullptr) require_all_on_device(op, {{"bias", bias}});
  const ConvGeometry g = checked(op, geometry);
  require_shape(op, "x", x, x.rows(), g.in_features());
  require_shape(op, "weight", weight, g.out_channels, g.weight_cols());
  if (bias != nullptr) require_shape(op, "bias", *bias, 1, g.out_channels);
  require_shape(op, "y", y, x.rows(), g.out_features());
  conv_forward_impl(g, x, weight, bias, y);
}

void Backend::conv_backward_data(const ConvGeometry& geometry, const Tensor& dy, const Tensor& weight, Tensor& dx) {
  const char* op = "conv_backward_data";
  require_all_on_device(op, {{"dy", &dy}, {"weight", &weight}, {"dx", &dx}});
  const ConvGeometry g = checked(op, geometry);
  require_shape(op, "dy", dy, dy.rows(), g.out_features());
  require_shape(op, "weight", weight, g.out_channels, g.weight_cols());
  require_shape(op, "dx", dx, dy.rows(), g.in_features());
  conv_backward_data_impl(g, dy, weight, dx);
}

void Backend::conv_accumulate_param_grads(const ConvGeometry& geometry, const Tensor& x, const Tensor& dy,
                                          Tensor& weight_grad, Tensor* bias_grad) {
  const char* op = "conv_accumulate_param_grads";
  require_all_on_device(op, {{"x", &x}, {"dy", &dy}, {"weight_grad", &weight_grad}});
  if (bias_grad != nullptr) require_all_on_device(op, {{"bias_grad", bias_grad}});
  const ConvGeometry g = checked(op, geometry);
  require_shape(op, "x", x, x.rows(), g.in_features());
  require_shape(op, "dy", dy, x.rows(), g.out_features());
  require_shape(op, "weight_grad", weight_grad, g.out_channels, g.weight_cols());
  if (bias_grad != nullptr) require_shape(op, "bias_grad", *bias_grad, 1, g.out_channels);
  conv_accumulate_param_grads_impl(g, x, dy, weight_grad, bias_grad);
}

namespace {

void check_columns(const char* op, const Tensor& source, int64_t source_col, const Tensor& destination,
                   int64_t destination_col, int64_t count) {
  const bool fits = count >= 0 && source_col >= 0 && destination_col >= 0 && source_col + count <= source.cols() &&
                    destination_col + count <= destination.cols() && source.rows() == destination.rows();
  if (!fits) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string(op) + ": columns [" + std::to_string(source_col) + ", +" + std::to_string(count) +
                    ") of a " + std::to_string(source.rows()) + "x" + std::to_string(source.cols()) +
                    " tensor do not fit columns [" + std::to_string(destination_col) + ", +" + std::to_string(count) +
                    ") of a " + std::to_string(destination.rows()) + "x" + std::to_string(destination.cols()) + " one");
  }
}

}  // namespace

void Backend::copy_columns(const Tensor& source, int64_t source_col, Tensor& destination, int64_t destination_col,
                           int64_t count) {
  require_all_on_device("copy_columns", {{"source", &source}, {"destination", &destination}});
  check_columns("copy_columns", source, source_col, destination, destination_col, count);
  copy_columns_impl(source, source_col, destination, destination_col, count, false);
}

void Backend::add_columns(const Tensor& source, int64_t source_col, Tensor& destination, int64_t destination_col,
                          int64_t count) {
  require_all_on_device("add_columns", {{"source", &source}, {"destination", &destination}});
  check_columns("add_columns", source, source_col, destination, destination_col, count);
  copy_columns_impl(source, source_col, destination, destination_col, count, true);
}

void Backend::pad_forward(const PadGeometry& geometry, const Tensor& x, Tensor& y) {
  const char* op = "pad_forward";
  require_all_on_device(op, {{"x", &x}, {"y", &y}});
  check_pad(op, geometry);
  require_shape(op, "x", x, x.rows(), geometry.in_features());
  require_shape(op, "y", y, x.rows(), geometry.out_features());
  pad_forward_impl(geometry, x, y);
}

void Backend::pad_backward(const PadGeometry& geometry, const Tensor& dy, Tensor& dx) {
  const char* op = "pad_backward";
  require_all_on_device(op, {{"dy", &dy}, {"dx", &dx}});
  check_pad(op, geometry);
  require_shape(op, "dy", dy, dy.rows(), geometry.out_features());
  require_shape(op, "dx", dx, dy.rows(), geometry.in_features());
  pad_backward_impl(geometry, dy, dx);
}

double Backend::channel_softmax_cross_entropy(int64_t channels, const Tensor& logits, const Tensor& target,
                                              float grad_scale, Tensor& grad) {
  const char* op = "channel_softmax_cross_entropy";
  require_all_on_device(op, {{"logits", &logits}, {"target", &target}, {"grad", &grad}});
  if (channels <= 0 || logits.cols() % channels != 0) {
    throw Error(ErrorCode::kInvalidArgument, std::string(op) + ": " + std::to_string(channels) +
                                                 " channels do not divide the logits' " +
                                                 std::to_string(logits.cols()) + " columns");
  }
  require_same_shape(op, "target", target, logits);
  require_same_shape(op, "grad", grad, logits);
  return channel_softmax_cross_entropy_impl(channels, logits, target, grad_scale, grad);
}

namespace {

[[noreturn]] void unavailable(const char* op, const std::string& device) {
  throw Error(ErrorCode::kUnsupported, std::string(op) + " is not available on " + device +
                                           " (field layers and skip connections run on the CPU backend in this version)");
}

}  // namespace

void Backend::conv_forward_impl(const ConvGeometry&, const Tensor&, const Tensor&, const Tensor*, Tensor&) {
  unavailable("conv_forward", device_name());
}
void Backend::conv_backward_data_impl(const ConvGeometry&, const Tensor&, const Tensor&, Tensor&) {
  unavailable("conv_backward_data", device_name());
}
void Backend::conv_accumulate_param_grads_impl(const ConvGeometry&, const Tensor&, const Tensor&, Tensor&, Tensor*) {
  unavailable("conv_accumulate_param_grads", device_name());
}
void Backend::copy_columns_impl(const Tensor&, int64_t, Tensor&, int64_t, int64_t, bool add) {
  unavailable(add ? "add_columns" : "copy_columns", device_name());
}
void Backend::pad_forward_impl(const PadGeometry&, const Tensor&, Tensor&) { unavailable("pad_forward", device_name()); }
void Backend::pad_backward_impl(const PadGeometry&, const Tensor&, Tensor&) {
  unavailable("pad_backward", device_name());
}
double Backend::channel_softmax_cross_entropy_impl(int64_t, const Tensor&, const Tensor&, float, Tensor&) {
  unavailable("channel_softmax_cross_entropy", device_name());
}

}  // namespace sluice::kernels
