// Backend's normalizations of fields (group norm, and layernorm over the channels at each point): their argument
// checks, and the defaults that refuse them on a backend that has no implementation.
#include <string>
#include <vector>

#include "core/common/error.h"
#include "kernels/backend.h"
#include "kernels/shape_check.h"

namespace sluice::kernels {
namespace {

void check_geometry(const char* op, const NormGeometry& geometry) {
  try {
    check_norm_geometry(geometry);
  } catch (const Error& e) {
    throw Error(ErrorCode::kInvalidArgument, std::string(op) + ": " + e.what());
  }
}

// The operands every norm op shares: the field tensors [samples][features()], the statistics [samples][stats]
// and the per-channel tensors [1][channels].
struct NormOperands {
  std::initializer_list<const Tensor*> fields;
  std::initializer_list<const char*> field_names;
  const Tensor* mean;
  const Tensor* rstd;
  std::initializer_list<const Tensor*> channel_tensors;
  std::initializer_list<const char*> channel_names;
};

void check_shapes(const char* op, const NormGeometry& g, int64_t stats, const NormOperands& o) {
  const int64_t samples = (*o.fields.begin())->rows();
  auto name = o.field_names.begin();
  for (const Tensor* t : o.fields) require_shape(op, *name++, *t, samples, g.features());
  require_shape(op, "mean", *o.mean, samples, stats);
  require_shape(op, "rstd", *o.rstd, samples, stats);
  name = o.channel_names.begin();
  for (const Tensor* t : o.channel_tensors) require_shape(op, *name++, *t, 1, g.channels);
}

[[noreturn]] void unavailable(const char* op, const std::string& device) {
  throw Error(ErrorCode::kUnsupported, std::string(op) + " is not available on " + device +
                                           " (field normalization layers run on the CPU backend in this version)");
}

}  // namespace

void Backend::group_norm_forward(const NormGeometry& geometry, const Tensor& x, const Tensor& weight,
                                 const Tensor& bias, Tensor& y, Tensor& mean, Tensor& rstd) {
  const char* op = "group_norm_forward";
  require_all_on_device(op, {{"x", &x}, {"weight", &weight}, {"bias", &bias}, {"y", &y}, {"mean", &mean},
                             {"rstd", &rstd}});
  check_geometry(op, geometry);
  check_shapes(op, geometry, geometry.groups, {{&x, &y}, {"x", "y"}, &mean, &rstd, {&weight, &bias}, {"weight", "bias"}});
  group_norm_forward_impl(geometry, x, weight, bias, y, mean, rstd);
}

void Backend::group_norm_backward_input(const NormGeometry& geometry, const Tensor& dy, const Tensor& x,
                                        const Tensor& weight, const Tensor& mean, const Tensor& rstd, Tensor& dx) {
  const char* op = "group_norm_backward_input";
  require_all_on_device(op, {{"dy", &dy}, {"x", &x}, {"weight", &weight}, {"mean", &mean}, {"rstd", &rstd},
                             {"dx", &dx}});
  check_geometry(op, geometry);
  check_shapes(op, geometry, geometry.groups, {{&x, &dy, &dx}, {"x", "dy", "dx"}, &mean, &rstd, {&weight}, {"weight"}});
  group_norm_backward_input_impl(geometry, dy, x, weight, mean, rstd, dx);
}

void Backend::group_norm_accumulate_param_grads(const NormGeometry& geometry, const Tensor& dy, const Tensor& x,
                                                const Tensor& mean, const Tensor& rstd, Tensor& weight_grad,
                                                Tensor& bias_grad) {
  const char* op = "group_norm_accumulate_param_grads";
  require_all_on_device(op, {{"dy", &dy}, {"x", &x}, {"mean", &mean}, {"rstd", &rstd},
                             {"weight_grad", &weight_grad}, {"bias_grad", &bias_grad}});
  check_geometry(op, geometry);
  check_shapes(op, geometry, geometry.groups,
               {{&x, &dy}, {"x", "dy"}, &mean, &rstd, {&weight_grad, &bias_grad}, {"weight_grad", "bias_grad"}});
  group_norm_accumulate_param_grads_impl(geometry, dy, x, mean, rstd, weight_grad, bias_grad);
}

std::vector<double> Backend::group_norm_partial_sums(const NormGeometry& geometry, const Tensor& x) {
  const char* op = "group_norm_partial_sums";
  require_all_on_device(op, {{"x", &x}});
  check_geometry(op, geometry);
  require_shape(op, "x", x, x.rows(), geometry.features());
  return group_norm_partial_sums_impl(geometry, x);
}

void Backend::group_norm_normalize(const NormGeometry& geometry, const Tensor& x, const Tensor& weight,
                                   const Tensor& bias, const Tensor& mean, const Tensor& rstd, Tensor& y) {
  const char* op = "group_norm_normalize";
  require_all_on_device(op, {{"x", &x}, {"weight", &weight}, {"bias", &bias}, {"mean", &mean}, {"rstd", &rstd},
                             {"y", &y}});
  check_geometry(op, geometry);
  check_shapes(op, geometry, geometry.groups,
               {{&x, &y}, {"x", "y"}, &mean, &rstd, {&weight, &bias}, {"weight", "bias"}});
  group_norm_normalize_impl(geometry, x, weight, bias, mean, rstd, y);
}

std::vector<double> Backend::group_norm_backward_partial_sums(const NormGeometry& geometry, const Tensor& dy,
                                                              const Tensor& x, const Tensor& weight,
                                                              const Tensor& mean, const Tensor& rstd) {
  const char* op = "group_norm_backward_partial_sums";
  require_all_on_device(op, {{"dy", &dy}, {"x", &x}, {"weight", &weight}, {"mean", &mean}, {"rstd", &rstd}});
  check_geometry(op, geometry);
  check_shapes(op, geometry, geometry.groups, {{&x, &dy}, {"x", "dy"}, &mean, &rstd, {&weight}, {"weight"}});
  return group_norm_backward_partial_sums_impl(geometry, dy, x, weight, mean, rstd);
}

void Backend::group_norm_backward_with_sums(const NormGeometry& geometry, const Tensor& dy, const Tensor& x,
                                            const Tensor& weight, const Tensor& mean, const Tensor& rstd,
                                            const Tensor& mean_g, const Tensor& mean_g_xhat, Tensor& dx) {
  const char* op = "group_norm_backward_with_sums";
  require_all_on_device(op, {{"dy", &dy}, {"x", &x}, {"weight", &weight}, {"mean", &mean}, {"rstd", &rstd},
                             {"mean_g", &mean_g}, {"mean_g_xhat", &mean_g_xhat}, {"dx", &dx}});
  check_geometry(op, geometry);
  check_shapes(op, geometry, geometry.groups,
               {{&x, &dy, &dx}, {"x", "dy", "dx"}, &mean, &rstd, {&weight}, {"weight"}});
  require_shape(op, "mean_g", mean_g, x.rows(), geometry.groups);
  require_shape(op, "mean_g_xhat", mean_g_xhat, x.rows(), geometry.groups);
  group_norm_backward_with_sums_impl(geometry, dy, x, weight, mean, rstd, mean_g, mean_g_xhat, dx);
}

void Backend::channel_layernorm_forward(const NormGeometry& geometry, const Tensor& x, const Tensor& weight,
                                        const Tensor& bias, Tensor& y, Tensor& mean, Tensor& rstd) {
  const char* op = "channel_layernorm_forward";
  require_all_on_device(op, {{"x", &x}, {"weight", &weight}, {"bias", &bias}, {"y", &y}, {"mean", &mean},
                             {"rstd", &rstd}});
  check_geometry(op, geometry);
  check_shapes(op, geometry, geometry.points, {{&x, &y}, {"x", "y"}, &mean, &rstd, {&weight, &bias}, {"weight", "bias"}});
  channel_layernorm_forward_impl(geometry, x, weight, bias, y, mean, rstd);
}

void Backend::channel_layernorm_backward_input(const NormGeometry& geometry, const Tensor& dy, const Tensor& x,
                                               const Tensor& weight, const Tensor& mean, const Tensor& rstd,
                                               Tensor& dx) {
  const char* op = "channel_layernorm_backward_input";
  require_all_on_device(op, {{"dy", &dy}, {"x", &x}, {"weight", &weight}, {"mean", &mean}, {"rstd", &rstd},
                             {"dx", &dx}});
  check_geometry(op, geometry);
  check_shapes(op, geometry, geometry.points, {{&x, &dy, &dx}, {"x", "dy", "dx"}, &mean, &rstd, {&weight}, {"weight"}});
  channel_layernorm_backward_input_impl(geometry, dy, x, weight, mean, rstd, dx);
}

void Backend::channel_layernorm_accumulate_param_grads(const NormGeometry& geometry, const Tensor& dy,
                                                       const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                                       Tensor& weight_grad, Tensor& bias_grad) {
  const char* op = "channel_layernorm_accumulate_param_grads";
  require_all_on_device(op, {{"dy", &dy}, {"x", &x}, {"mean", &mean}, {"rstd", &rstd},
                             {"weight_grad", &weight_grad}, {"bias_grad", &bias_grad}});
  check_geometry(op, geometry);
  check_shapes(op, geometry, geometry.points,
               {{&x, &dy}, {"x", "dy"}, &mean, &rstd, {&weight_grad, &bias_grad}, {"weight_grad", "bias_grad"}});
  channel_layernorm_accumulate_param_grads_impl(geometry, dy, x, mean, rstd, weight_grad, bias_grad);
}

void Backend::group_norm_forward_impl(const NormGeometry&, const Tensor&, const Tensor&, const Tensor&, Tensor&,
                                      Tensor&, Tensor&) {
  unavailable("group_norm_forward", device_name());
}
void Backend::group_norm_backward_input_impl(const NormGeometry&, const Tensor&, const Tensor&, const Tensor&,
                                             const Tensor&, const Tensor&, Tensor&) {
  unavailable("group_norm_backward_input", device_name());
}
void Backend::group_norm_accumulate_param_grads_impl(const NormGeometry&, const Tensor&, const Tensor&, const Tensor&,
                                                     const Tensor&, Tensor&, Tensor&) {
  unavailable("group_norm_accumulate_param_grads", device_name());
}
std::vector<double> Backend::group_norm_partial_sums_impl(const NormGeometry&, const Tensor&) {
  unavailable("group_norm_partial_sums", device_name());
}
void Backend::group_norm_normalize_impl(const NormGeometry&, const Tensor&, const Tensor&, const Tensor&,
                                        const Tensor&, const Tensor&, Tensor&) {
  unavailable("group_norm_normalize", device_name());
}
std::vector<double> Backend::group_norm_backward_partial_sums_impl(const NormGeometry&, const Tensor&, const Tensor&,
                                                                   const Tensor&, const Tensor&, const Tensor&) {
  unavailable("group_norm_backward_partial_sums", device_name());
}
void Backend::group_norm_backward_with_sums_impl(const NormGeometry&, const Tensor&, const Tensor&, const Tensor&,
                                                 const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                                 Tensor&) {
  unavailable("group_norm_backward_with_sums", device_name());
}
void Backend::channel_layernorm_forward_impl(const NormGeometry&, const Tensor&, const Tensor&, const Tensor&,
                                             Tensor&, Tensor&, Tensor&) {
  unavailable("channel_layernorm_forward", device_name());
}
void Backend::channel_layernorm_backward_input_impl(const NormGeometry&, const Tensor&, const Tensor&, const Tensor&,
                                                    const Tensor&, const Tensor&, Tensor&) {
  unavailable("channel_layernorm_backward_input", device_name());
}
void Backend::channel_layernorm_accumulate_param_grads_impl(const NormGeometry&, const Tensor&, const Tensor&,
                                                            const Tensor&, const Tensor&, Tensor&, Tensor&) {
  unavailable("channel_layernorm_accumulate_param_grads", device_name());
}

}  // namespace sluice::kernels
