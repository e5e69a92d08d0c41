// Normalizations of fields [C, D..], with PyTorch's affine parameters weight (init 1) and bias (init 0), each [C]
// (stored [1][C]):
//   - group_norm / instance_norm: statistics per sample and group over the group's channels × all points
//     (nn.GroupNorm; instance_norm is groups = channels, nn.InstanceNorm with affine=True);
//   - layernorm on a field: statistics per sample and point over the channels (PyTorch: channels moved last,
//     F.layer_norm over C). layernorm on rows stays LayerNormLayer (parameters gamma and beta).
// The forward keeps the input and the per-set mean and rstd for the backward, which is split into I and W.
// All three also run on one rank's block of a split field (a FieldDomain), with the undecomposed run's bits: group
// and instance norm gather their statistics' sums per canonical tile across the domain group; layernorm's statistics
// are per point (the plain ops on the block); the parameter gradients of all are per-tile partials finished by
// finish_domain_step.
#pragma once

#include <memory>
#include <string>

#include "core/model/field_domain.h"
#include "core/model/layer.h"
#include "kernels/backend.h"
#include "kernels/norm_geometry.h"

namespace sluice::model {

class FieldNormLayer : public Layer {
 public:
  enum class Over { kGroups, kChannelsAtEachPoint };

  // `type`: the config's name for the layer ("group_norm", "instance_norm", "layernorm"). `domain` (the level of
  // the layer's input; it must outlive the layer): run on this rank's block (DomainGroupNormOps, or for layernorm
  // the plain ops on the block and DomainChannelLayerNormOps for the parameter gradients); `geometry` is still the
  // whole field's at that level.
  FieldNormLayer(kernels::Backend& backend, std::string type, Over over, const kernels::NormGeometry& geometry,
                 FieldDomain* domain = nullptr);

  std::string type() const override { return type_; }
  // On a domain: the block's features.
  int64_t in_features() const override { return geometry_.channels * run_.points; }
  int64_t out_features() const override { return geometry_.channels * run_.points; }
  double flops_per_sample() const override;
  std::vector<Parameter*> parameters() override { return {&weight_, &bias_}; }
  void init(uint64_t seed) override;

  kernels::Tensor forward(kernels::Tensor x, const ForwardContext& context, LayerSaved& saved) override;
  kernels::Tensor backward_input(const kernels::Tensor& dy, LayerSaved& saved) override;
  void backward_weight(const kernels::Tensor& dy, LayerSaved& saved) override;
  void finish_domain_step() override;

 private:
  int64_t statistics() const { return over_ == Over::kGroups ? run_.groups : run_.points; }
  void build_on(FieldDomain& domain);

  kernels::Backend& backend_;
  std::string type_;
  Over over_;
  kernels::NormGeometry geometry_;  // as configured: the whole field's
  kernels::NormGeometry run_;       // what the plain ops run: the whole field, or a layernorm's block
  Parameter weight_;
  Parameter bias_;
  // Both null: the whole field, as without a domain.
  std::unique_ptr<DomainGroupNormOps> groups_on_block_;
  std::unique_ptr<DomainChannelLayerNormOps> layernorm_on_block_;
};

}  // namespace sluice::model
