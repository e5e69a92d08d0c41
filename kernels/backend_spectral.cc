// Backend's spectral-convolution ops: their argument checks, and the defaults that refuse them on a backend that
// has no implementation.
#include <string>

#include "core/common/error.h"
#include "kernels/backend.h"
#include "kernels/shape_check.h"

namespace sluice::kernels {
namespace {

void checked(const char* op, const SpectralGeometry& geometry) {
  try {
    check_spectral_geometry(geometry);
  } catch (const Error& e) {
    throw Error(ErrorCode::kInvalidArgument, std::string(op) + ": " + e.what());
  }
}

[[noreturn]] void unavailable(const char* op, const std::string& device) {
  throw Error(ErrorCode::kUnsupported, std::string(op) + " is not available on " + device +
                                           " (the cpu and cuda backends have the spectral convolution)");
}

}  // namespace

void Backend::spectral_conv_forward(const SpectralGeometry& geometry, const Tensor& x, const Tensor& weight,
                                    Tensor& y) {
  const char* op = "spectral_conv_forward";
  require_all_on_device(op, {{"x", &x}, {"weight", &weight}, {"y", &y}});
  checked(op, geometry);
  require_shape(op, "x", x, x.rows(), geometry.in_features());
  require_shape(op, "weight", weight, geometry.in_channels, geometry.weight_cols());
  require_shape(op, "y", y, x.rows(), geometry.out_features());
  spectral_conv_forward_impl(geometry, x, weight, y);
}

void Backend::spectral_conv_backward_data(const SpectralGeometry& geometry, const Tensor& dy, const Tensor& weight,
                                          Tensor& dx) {
  const char* op = "spectral_conv_backward_data";
  require_all_on_device(op, {{"dy", &dy}, {"weight", &weight}, {"dx", &dx}});
  checked(op, geometry);
  require_shape(op, "dy", dy, dy.rows(), geometry.out_features());
  require_shape(op, "weight", weight, geometry.in_channels, geometry.weight_cols());
  require_shape(op, "dx", dx, dy.rows(), geometry.in_features());
  spectral_conv_backward_data_impl(geometry, dy, weight, dx);
}

void Backend::spectral_conv_accumulate_weight_grad(const SpectralGeometry& geometry, const Tensor& x,
                                                   const Tensor& dy, Tensor& weight_grad) {
  const char* op = "spectral_conv_accumulate_weight_grad";
  require_all_on_device(op, {{"x", &x}, {"dy", &dy}, {"weight_grad", &weight_grad}});
  checked(op, geometry);
  require_shape(op, "x", x, x.rows(), geometry.in_features());
  require_shape(op, "dy", dy, x.rows(), geometry.out_features());
  require_shape(op, "weight_grad", weight_grad, geometry.in_channels, geometry.weight_cols());
  spectral_conv_accumulate_weight_grad_impl(geometry, x, dy, weight_grad);
}

void Backend::spectral_conv_forward_impl(const SpectralGeometry&, const Tensor&, const Tensor&, Tensor&) {
  unavailable("spectral_conv_forward", device_name());
}
void Backend::spectral_conv_backward_data_impl(const SpectralGeometry&, const Tensor&, const Tensor&, Tensor&) {
  unavailable("spectral_conv_backward_data", device_name());
}
void Backend::spectral_conv_accumulate_weight_grad_impl(const SpectralGeometry&, const Tensor&, const Tensor&,
                                                        Tensor&) {
  unavailable("spectral_conv_accumulate_weight_grad", device_name());
}

}  // namespace sluice::kernels
