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

namespace {

// The statistics the forward stashed, as the domain ops take them (copies: [samples][groups] floats each).
kernels::GroupNormStatistics stashed_statistics(const LayerSaved& saved) {
  return kernels::GroupNormStatistics{saved.tensors[kMean], saved.tensors[kRstd]};
}

}  // namespace

FieldNormLayer::FieldNormLayer(kernels::Backend& backend, std::string type, Over over,
                               const kernels::NormGeometry& geometry, FieldDomain* domain)
    : backend_(backend), type_(std::move(type)), over_(over), geometry_(geometry), features_(geometry.features()) {
  try {
    kernels::check_norm_geometry(geometry_);
  } catch (const Error& e) {
    throw Error(ErrorCode::kInvalidArgument, type_ + ": " + e.what());
  }
  if (domain != nullptr) {
    if (over_ != Over::kGroups) {
      throw Error(ErrorCode::kUnsupported, type_ + " on a split field: its parameter gradients are sums over the "
                                                   "field that are not formed per tile yet");
    }
    try {
      domain_ = domain->group_norm(backend, geometry_, type_ + " layer");
    } catch (const Error& e) {
      throw Error(e.code(), type_ + " layer on a split field: " + e.what());
    }
    features_ = geometry_.channels * domain->block_points();
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
  saved.tensors.clear();
  if (domain_) {  // a collective: a recomputed forward gathers the statistics' sums again (the same bits)
    kernels::GroupNormStatistics stats;
    Tensor y = domain_->forward(x, weight_.value, bias_.value, stats);
    saved.tensors.push_back(std::move(x));
    saved.tensors.push_back(std::move(stats.mean));
    saved.tensors.push_back(std::move(stats.rstd));
    return y;
  }
  Tensor y = backend_.empty(x.rows(), x.cols());
  Tensor mean = backend_.empty(x.rows(), statistics());
  Tensor rstd = backend_.empty(x.rows(), statistics());
  if (over_ == Over::kGroups) {
    backend_.group_norm_forward(geometry_, x, weight_.value, bias_.value, y, mean, rstd);
  } else {
    backend_.channel_layernorm_forward(geometry_, x, weight_.value, bias_.value, y, mean, rstd);
  }
  saved.tensors.push_back(std::move(x));
  saved.tensors.push_back(std::move(mean));
  saved.tensors.push_back(std::move(rstd));
  return y;
}

Tensor FieldNormLayer::backward_input(const Tensor& dy, LayerSaved& saved) {
  const Tensor& x = saved.tensors[kInput];
  if (domain_) return domain_->backward_data(dy, x, weight_.value, stashed_statistics(saved));
  Tensor dx = backend_.empty(dy.rows(), dy.cols());
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
  if (domain_) {  // into the per-tile accumulators: finish_domain_step adds them in tile order
    domain_->accumulate_param_grads(dy, x, stashed_statistics(saved));
    return;
  }
  if (over_ == Over::kGroups) {
    backend_.group_norm_accumulate_param_grads(geometry_, dy, x, saved.tensors[kMean], saved.tensors[kRstd],
                                               weight_.grad, bias_.grad);
  } else {
    backend_.channel_layernorm_accumulate_param_grads(geometry_, dy, x, saved.tensors[kMean], saved.tensors[kRstd],
                                                      weight_.grad, bias_.grad);
  }
}

void FieldNormLayer::finish_domain_step() {
  if (domain_) domain_->finish_step(weight_.grad, bias_.grad);
}

}  // namespace sluice::model
