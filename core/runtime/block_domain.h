// The model's FieldDomain (core/model/field_domain.h) on one rank's block: the layers' domain ops
// (core/model/conv_layer.h etc.) run as core/runtime's DomainConv, DomainDeconv, DomainLinearUpsample,
// DomainGroupNorm and domain_field_loss over a DomainField (docs/DOMAIN.md "Domain-parallel ops"). The levels a
// model reaches (coarsened after pools, refined after upsamplings) are made once and owned here, so a layer's
// reference to its level lives as long as this object.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/model/field_domain.h"
#include "core/runtime/domain_field.h"

namespace sluice::runtime {

class BlockDomain : public model::FieldDomain {
 public:
  // `field`: this rank's block at the model input's level; its channel and gather must outlive this object.
  explicit BlockDomain(const DomainField& field) : field_(field) {}
  BlockDomain(const BlockDomain&) = delete;
  BlockDomain& operator=(const BlockDomain&) = delete;

  const DomainField& field() const { return field_; }

  const std::vector<int64_t>& global_extent() const override { return field_.grid().global; }
  const std::vector<int64_t>& block_offset() const override { return field_.grid().block_offset; }
  const std::vector<int64_t>& block_extent() const override { return field_.grid().block_extent; }
  model::FieldDomain& coarsened(const std::vector<int64_t>& down) override;
  model::FieldDomain& refined(const std::vector<int64_t>& up) override;

  std::unique_ptr<model::DomainConvOps> conv(kernels::Backend& backend, const kernels::ConvGeometry& conv,
                                             bool with_bias, std::optional<kernels::PadMode> padding,
                                             const std::string& name) override;
  std::unique_ptr<model::DomainDeconvOps> deconv(kernels::Backend& backend, const kernels::DeconvGeometry& deconv,
                                                 bool with_bias, const std::string& name) override;
  std::unique_ptr<model::DomainUpsampleOps> linear_upsample(kernels::Backend& backend, int64_t channels,
                                                            const std::vector<int64_t>& factor) override;
  std::unique_ptr<model::DomainGroupNormOps> group_norm(kernels::Backend& backend, const kernels::NormGeometry& norm,
                                                        const std::string& name) override;
  std::unique_ptr<model::DomainChannelLayerNormOps> channel_layernorm(kernels::Backend& backend,
                                                                      const kernels::NormGeometry& norm,
                                                                      const std::string& name) override;
  double field_loss(kernels::Backend& backend, kernels::FieldLoss loss, int64_t channels,
                    const kernels::Tensor& pred, const kernels::Tensor& target, float grad_scale,
                    kernels::Tensor& grad, const std::string& what) override;

 private:
  model::FieldDomain& level(const std::vector<int64_t>& factor, bool refine);

  DomainField field_;
  // (refined?, factor) -> the level, made on first use.
  std::map<std::pair<bool, std::vector<int64_t>>, std::unique_ptr<BlockDomain>> levels_;
};

}  // namespace sluice::runtime
