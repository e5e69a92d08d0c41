// Normalizations of fields [C, D..], with PyTorch's affine parameters weight (init 1) and bias (init 0), each [C]
// (stored [1][C]):
//   - group_norm / instance_norm: statistics per sample and group over the group's channels × all points
//     (nn.GroupNorm; instance_norm is groups = channels, nn.InstanceNorm with affine=True);
//   - layernorm on a field: statistics per sample and point over the channels (PyTorch: channels moved last,
//     F.layer_norm over C). layernorm on rows stays LayerNormLayer (parameters gamma and beta).
// The forward keeps the input and the per-set mean and rstd for the backward, which is split into I and W.
// group_norm and instance_norm also run on one rank's block of a split field (a FieldDomain: the statistics'
// sums per canonical tile gathered across the domain group, parameter gradients per tile finished by
// finish_domain_step), with the undecomposed run's bits.
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
  // the layer's input; it must outlive the layer): run on this rank's block (DomainGroupNormOps); `geometry` is
  // still the whole field's at that level. Only Over::kGroups can (kUnsupported otherwise: layernorm's parameter
  // gradients are sums over the field that are not tiled yet).
  FieldNormLayer(kernels::Backend& backend, std::string type, Over over, const kernels::NormGeometry& geometry,
                 FieldDomain* domain = nullptr);

  std::string type() const override { return type_; }
  // On a domain: the block's features.
  int64_t in_features() const override { return features_; }
  int64_t out_features() const override { return features_; }
  double flops_per_sample() const override;
  std::vector<Parameter*> parameters() override { return {&weight_, &bias_}; }
  void init(uint64_t seed) override;

  kernels::Tensor forward(kernels::Tensor x, const ForwardContext& context, LayerSaved& saved) override;
  kernels::Tensor backward_input(const kernels::Tensor& dy, LayerSaved& saved) override;
  void backward_weight(const kernels::Tensor& dy, LayerSaved& saved) override;
  void finish_domain_step() override;

 private:
  int64_t statistics() const { return over_ == Over::kGroups ? geometry_.groups : geometry_.points; }

  kernels::Backend& backend_;
  std::string type_;
  Over over_;
  kernels::NormGeometry geometry_;
  Parameter weight_;
  Parameter bias_;
  std::unique_ptr<DomainGroupNormOps> domain_;  // null: the whole field, as without a domain
  int64_t features_ = 0;                        // per sample: the whole field's, or on a domain the block's
};

}  // namespace sluice::model
