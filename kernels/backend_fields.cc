// Backend's field ops (convolution and explicit padding): their argument checks, and the defaults that refuse them on
// a backend that has no implementation.
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

namespace {

[[noreturn]] void unavailable(const char* op, const std::string& device) {
  throw Error(ErrorCode::kUnsupported, std::string(op) + " is not available on " + device +
                                           " (convolution layers run on the CPU backend in this version)");
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
void Backend::pad_forward_impl(const PadGeometry&, const Tensor&, Tensor&) { unavailable("pad_forward", device_name()); }
void Backend::pad_backward_impl(const PadGeometry&, const Tensor&, Tensor&) {
  unavailable("pad_backward", device_name());
}

}  // namespace sluice::kernels
