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
    : backend_(backend), type_(std::move(type)), over_(over), geometry_(geometry), run_(geometry) {
  try {
    kernels::check_norm_geometry(geometry_);
  } catch (const Error& e) {
    throw Error(ErrorCode::kInvalidArgument, type_ + ": " + e.what());
  }
  if (domain != nullptr) build_on(*domain);
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

// The domain's ops over the whole field's geometry; the plain ops (layernorm's) then run on the block's points.
void FieldNormLayer::build_on(FieldDomain& domain) {
  try {
    if (over_ == Over::kGroups) {
      groups_on_block_ = domain.group_norm(backend_, geometry_, type_ + " layer");
    } else {
      layernorm_on_block_ = domain.channel_layernorm(backend_, geometry_, type_ + " layer");
    }
  } catch (const Error& e) {
    throw Error(e.code(), type_ + " layer on a split field: " + e.what());
  }
  run_.points = domain.block_points();
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
  if (groups_on_block_) {  // a collective: a recomputed forward gathers the statistics' sums again (the same bits)
    kernels::GroupNormStatistics stats;
    Tensor y = groups_on_block_->forward(x, weight_.value, bias_.value, stats);
    saved.tensors.push_back(std::move(x));
    saved.tensors.push_back(std::move(stats.mean));
    saved.tensors.push_back(std::move(stats.rstd));
    return y;
  }
  Tensor y = backend_.empty(x.rows(), x.cols());
  Tensor mean = backend_.empty(x.rows(), statistics());
  Tensor rstd = backend_.empty(x.rows(), statistics());
  if (over_ == Over::kGroups) {
    backend_.group_norm_forward(run_, x, weight_.value, bias_.value, y, mean, rstd);
  } else {  // per point: on a block, the whole field's values at its points
    backend_.channel_layernorm_forward(run_, x, weight_.value, bias_.value, y, mean, rstd);
  }
  saved.tensors.push_back(std::move(x));
  saved.tensors.push_back(std::move(mean));
  saved.tensors.push_back(std::move(rstd));
  return y;
}

Tensor FieldNormLayer::backward_input(const Tensor& dy, LayerSaved& saved) {
  const Tensor& x = saved.tensors[kInput];
  if (groups_on_block_) return groups_on_block_->backward_data(dy, x, weight_.value, stashed_statistics(saved));
  Tensor dx = backend_.empty(dy.rows(), dy.cols());
  if (over_ == Over::kGroups) {
    backend_.group_norm_backward_input(run_, dy, x, weight_.value, saved.tensors[kMean], saved.tensors[kRstd], dx);
  } else {
    backend_.channel_layernorm_backward_input(run_, dy, x, weight_.value, saved.tensors[kMean],
                                              saved.tensors[kRstd], dx);
  }
  return dx;
}

// On a block: per-tile partials into the accumulators, which finish_domain_step adds in tile order.
void FieldNormLayer::backward_weight(const Tensor& dy, LayerSaved& saved) {
  const Tensor& x = saved.tensors[kInput];
  const Tensor& mean = saved.tensors[kMean];
  const Tensor& rstd = saved.tensors[kRstd];
  if (groups_on_block_) {
    groups_on_block_->accumulate_param_grads(dy, x, stashed_statistics(saved));
  } else if (layernorm_on_block_) {
    layernorm_on_block_->accumulate_param_grads(dy, x, mean, rstd);
  } else if (over_ == Over::kGroups) {
    backend_.group_norm_accumulate_param_grads(run_, dy, x, mean, rstd, weight_.grad, bias_.grad);
  } else {
    backend_.channel_layernorm_accumulate_param_grads(run_, dy, x, mean, rstd, weight_.grad, bias_.grad);
  }
}

void FieldNormLayer::finish_domain_step() {
  if (groups_on_block_) groups_on_block_->finish_step(weight_.grad, bias_.grad);
  if (layernorm_on_block_) layernorm_on_block_->finish_step(weight_.grad, bias_.grad);
}

}  // namespace sluice::model
