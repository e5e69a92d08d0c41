// Backend's pooling, upsampling and transposed-convolution ops: their argument checks, and the defaults that refuse
// them on a backend that has no implementation.
#include <string>

#include "core/common/error.h"
#include "kernels/backend.h"
#include "kernels/shape_check.h"

namespace sluice::kernels {
namespace {

// Runs `check(geometry)` and names `op` in what it throws.
template <typename Geometry>
void checked(const char* op, const Geometry& geometry, void (*check)(const Geometry&)) {
  try {
    check(geometry);
  } catch (const Error& e) {
    throw Error(ErrorCode::kInvalidArgument, std::string(op) + ": " + e.what());
  }
}

[[noreturn]] void unavailable(const char* op, const std::string& device) {
  throw Error(ErrorCode::kUnsupported, std::string(op) + " is not available on " + device +
                                           " (pooling, upsampling and conv_transpose run on the CPU backend in this "
                                           "version)");
}

}  // namespace

void Backend::pool_forward(const PoolGeometry& geometry, const Tensor& x, Tensor& y) {
  const char* op = "pool_forward";
  require_all_on_device(op, {{"x", &x}, {"y", &y}});
  checked(op, geometry, check_pool_geometry);
  require_shape(op, "x", x, x.rows(), geometry.in_features());
  require_shape(op, "y", y, x.rows(), geometry.out_features());
  pool_forward_impl(geometry, x, y);
}

void Backend::pool_backward(const PoolGeometry& geometry, const Tensor& x, const Tensor& dy, Tensor& dx) {
  const char* op = "pool_backward";
  require_all_on_device(op, {{"x", &x}, {"dy", &dy}, {"dx", &dx}});
  checked(op, geometry, check_pool_geometry);
  require_shape(op, "x", x, dy.rows(), geometry.in_features());
  require_shape(op, "dy", dy, dy.rows(), geometry.out_features());
  require_shape(op, "dx", dx, dy.rows(), geometry.in_features());
  pool_backward_impl(geometry, x, dy, dx);
}

void Backend::resample_forward(const ResampleGeometry& geometry, const Tensor& x, Tensor& y) {
  const char* op = "resample_forward";
  require_all_on_device(op, {{"x", &x}, {"y", &y}});
  checked(op, geometry, check_resample_geometry);
  require_shape(op, "x", x, x.rows(), geometry.in_features());
  require_shape(op, "y", y, x.rows(), geometry.out_features());
  resample_forward_impl(geometry, x, y);
}

void Backend::resample_backward(const ResampleGeometry& geometry, const Tensor& dy, Tensor& dx) {
  const char* op = "resample_backward";
  require_all_on_device(op, {{"dy", &dy}, {"dx", &dx}});
  checked(op, geometry, check_resample_geometry);
  require_shape(op, "dy", dy, dy.rows(), geometry.out_features());
  require_shape(op, "dx", dx, dy.rows(), geometry.in_features());
  resample_backward_impl(geometry, dy, dx);
}

void Backend::deconv_forward(const DeconvGeometry& geometry, const Tensor& x, const Tensor& weight,
                             const Tensor* bias, Tensor& y) {
  const char* op = "deconv_forward";
  require_all_on_device(op, {{"x", &x}, {"weight", &weight}, {"y", &y}});
  if (bias != nullptr) require_all_on_device(op, {{"bias", bias}});
  checked(op, geometry, check_deconv_geometry);
  require_shape(op, "x", x, x.rows(), geometry.in_features());
  require_shape(op, "weight", weight, geometry.in_channels, geometry.weight_cols());
  if (bias != nullptr) require_shape(op, "bias", *bias, 1, geometry.out_channels);
  require_shape(op, "y", y, x.rows(), geometry.out_features());
  deconv_forward_impl(geometry, x, weight, bias, y);
}

void Backend::deconv_backward_data(const DeconvGeometry& geometry, const Tensor& dy, const Tensor& weight,
                                   Tensor& dx) {
  const char* op = "deconv_backward_data";
  require_all_on_device(op, {{"dy", &dy}, {"weight", &weight}, {"dx", &dx}});
  checked(op, geometry, check_deconv_geometry);
  require_shape(op, "dy", dy, dy.rows(), geometry.out_features());
  require_shape(op, "weight", weight, geometry.in_channels, geometry.weight_cols());
  require_shape(op, "dx", dx, dy.rows(), geometry.in_features());
  deconv_backward_data_impl(geometry, dy, weight, dx);
}

void Backend::deconv_accumulate_param_grads(const DeconvGeometry& geometry, const Tensor& x, const Tensor& dy,
                                            Tensor& weight_grad, Tensor* bias_grad) {
  const char* op = "deconv_accumulate_param_grads";
  require_all_on_device(op, {{"x", &x}, {"dy", &dy}, {"weight_grad", &weight_grad}});
  if (bias_grad != nullptr) require_all_on_device(op, {{"bias_grad", bias_grad}});
  checked(op, geometry, check_deconv_geometry);
  require_shape(op, "x", x, x.rows(), geometry.in_features());
  require_shape(op, "dy", dy, x.rows(), geometry.out_features());
  require_shape(op, "weight_grad", weight_grad, geometry.in_channels, geometry.weight_cols());
  if (bias_grad != nullptr) require_shape(op, "bias_grad", *bias_grad, 1, geometry.out_channels);
  deconv_accumulate_param_grads_impl(geometry, x, dy, weight_grad, bias_grad);
}

void Backend::pool_forward_impl(const PoolGeometry&, const Tensor&, Tensor&) {
  unavailable("pool_forward", device_name());
}
void Backend::pool_backward_impl(const PoolGeometry&, const Tensor&, const Tensor&, Tensor&) {
  unavailable("pool_backward", device_name());
}
void Backend::resample_forward_impl(const ResampleGeometry&, const Tensor&, Tensor&) {
  unavailable("resample_forward", device_name());
}
void Backend::resample_backward_impl(const ResampleGeometry&, const Tensor&, Tensor&) {
  unavailable("resample_backward", device_name());
}
void Backend::deconv_forward_impl(const DeconvGeometry&, const Tensor&, const Tensor&, const Tensor*, Tensor&) {
  unavailable("deconv_forward", device_name());
}
void Backend::deconv_backward_data_impl(const DeconvGeometry&, const Tensor&, const Tensor&, Tensor&) {
  unavailable("deconv_backward_data", device_name());
}
void Backend::deconv_accumulate_param_grads_impl(const DeconvGeometry&, const Tensor&, const Tensor&, Tensor&,
                                                 Tensor*) {
  unavailable("deconv_accumulate_param_grads", device_name());
}

}  // namespace sluice::kernels
