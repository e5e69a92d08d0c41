#include "core/model/field_norm_layer.h"

#include <utility>

#include "core/common/error.h"
#include "core/model/layer_costs.h"

namespace sluice::model {

using kernels::Tensor;

// saved.tensors layout
constexpr size_t kInput = 0;
constexpr size_t kMean = 1;  // [samples][statistics()]
constexpr size_t kRstd = 2;

FieldNormLayer::FieldNormLayer(kernels::Backend& backend, std::string type, Over over,
                               const kernels::NormGeometry& geometry)
    : backend_(backend), type_(std::move(type)), over_(over), geometry_(geometry) {
  try {
    kernels::check_norm_geometry(geometry_);
  } catch (const Error& e) {
    throw Error(ErrorCode::kInvalidArgument, type_ + ": " + e.what());
  }
  weight_.name = "weight";
  weight_.value = backend.zeros(1, geometry_.channels);
  weight_.grad = backend.zeros(1, geometry_.channels);
  weight_.shape = {geometry_.channels};
  bias_.name = "bias";
  bias_.value = backend.zeros(1, geometry_.channels);
  bias_.grad = backend.zeros(1, geometry_.channels);
  bias_.shape = {geometry_.channels};
  init(0);
}

double FieldNormLayer::flops_per_sample() const { return field_norm_flops(geometry_.features()); }

void FieldNormLayer::init(uint64_t seed) {
  (void)seed;  // PyTorch's start: the identity affine map, no randomness
  backend_.fill(1.0f, weight_.value);
  backend_.fill(0.0f, bias_.value);
}

Tensor FieldNormLayer::forward(Tensor x, const ForwardContext& context, LayerSaved& saved) {
  (void)context;
  Tensor y = backend_.empty(x.rows(), x.cols());
  Tensor mean = backend_.empty(x.rows(), statistics());
  Tensor rstd = backend_.empty(x.rows(), statistics());
  if (over_ == Over::kGroups) {
    backend_.group_norm_forward(geometry_, x, weight_.value, bias_.value, y, mean, rstd);
  } else {
    backend_.channel_layernorm_forward(geometry_, x, weight_.value, bias_.value, y, mean, rstd);
  }
  saved.tensors.clear();
  saved.tensors.push_back(std::move(x));
  saved.tensors.push_back(std::move(mean));
  saved.tensors.push_back(std::move(rstd));
  return y;
}

Tensor FieldNormLayer::backward_input(const Tensor& dy, LayerSaved& saved) {
  Tensor dx = backend_.empty(dy.rows(), dy.cols());
  const Tensor& x = saved.tensors[kInput];
  if (over_ == Over::kGroups) {
    backend_.group_norm_backward_input(geometry_, dy, x, weight_.value, saved.tensors[kMean], saved.tensors[kRstd],
                                       dx);
  } else {
    backend_.channel_layernorm_backward_input(geometry_, dy, x, weight_.value, saved.tensors[kMean],
                                              saved.tensors[kRstd], dx);
  }
  return dx;
}

void FieldNormLayer::backward_weight(const Tensor& dy, LayerSaved& saved) {
  const Tensor& x = saved.tensors[kInput];
  if (over_ == Over::kGroups) {
    backend_.group_norm_accumulate_param_grads(geometry_, dy, x, saved.tensors[kMean], saved.tensors[kRstd],
                                               weight_.grad, bias_.grad);
  } else {
    backend_.channel_layernorm_accumulate_param_grads(geometry_, dy, x, saved.tensors[kMean], saved.tensors[kRstd],
                                                      weight_.grad, bias_.grad);
  }
}

}  // namespace sluice::model
