#include "core/runtime/block_domain.h"

#include <algorithm>

#include "core/runtime/domain_conv.h"
#include "core/runtime/domain_deconv.h"
#include "core/runtime/domain_loss.h"
#include "core/runtime/domain_norm.h"
#include "core/runtime/domain_sampling.h"

namespace sluice::runtime {

model::FieldDomain& BlockDomain::level(const std::vector<int64_t>& factor, bool refine) {
  if (std::all_of(factor.begin(), factor.end(), [](int64_t f) { return f == 1; }) &&
      factor.size() == field_.grid().dims()) {
    return *this;
  }
  std::unique_ptr<BlockDomain>& slot = levels_[{refine, factor}];
  if (!slot) slot = std::make_unique<BlockDomain>(refine ? field_.refined(factor) : field_.coarsened(factor));
  return *slot;
}

model::FieldDomain& BlockDomain::coarsened(const std::vector<int64_t>& down) { return level(down, false); }

model::FieldDomain& BlockDomain::refined(const std::vector<int64_t>& up) { return level(up, true); }

std::unique_ptr<model::DomainConvOps> BlockDomain::conv(kernels::Backend& backend, const kernels::ConvGeometry& conv,
                                                        bool with_bias, std::optional<kernels::PadMode> padding,
                                                        const std::string& name) {
  comm::HaloSide edge = comm::HaloSide::kZeros;
  if (padding == kernels::PadMode::kPeriodic) edge = comm::HaloSide::kNeighbour;
  if (padding == kernels::PadMode::kReflect) edge = comm::HaloSide::kReflect;
  return std::make_unique<DomainConv>(backend, field_, conv, with_bias, name, edge);
}

std::unique_ptr<model::DomainDeconvOps> BlockDomain::deconv(kernels::Backend& backend,
                                                            const kernels::DeconvGeometry& deconv, bool with_bias,
                                                            const std::string& name) {
  return std::make_unique<DomainDeconv>(backend, field_, deconv, with_bias, name);
}

std::unique_ptr<model::DomainUpsampleOps> BlockDomain::linear_upsample(kernels::Backend& backend, int64_t channels,
                                                                       const std::vector<int64_t>& factor) {
  return std::make_unique<DomainLinearUpsample>(backend, field_, channels, factor);
}

std::unique_ptr<model::DomainGroupNormOps> BlockDomain::group_norm(kernels::Backend& backend,
                                                                   const kernels::NormGeometry& norm,
                                                                   const std::string& name) {
  return std::make_unique<DomainGroupNorm>(backend, field_, norm, name);
}

std::unique_ptr<model::DomainChannelLayerNormOps> BlockDomain::channel_layernorm(kernels::Backend& backend,
                                                                                 const kernels::NormGeometry& norm,
                                                                                 const std::string& name) {
  return std::make_unique<DomainChannelLayerNorm>(backend, field_, norm, name);
}

double BlockDomain::field_loss(kernels::Backend& backend, kernels::FieldLoss loss, int64_t channels,
                               const kernels::Tensor& pred, const kernels::Tensor& target, float grad_scale,
                               kernels::Tensor& grad, const std::string& what) {
  return domain_field_loss(backend, field_, loss, channels, pred, target, grad_scale, grad, what);
}

}  // namespace sluice::runtime
