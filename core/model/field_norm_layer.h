// Normalizations of fields [C, D..], with PyTorch's affine parameters weight (init 1) and bias (init 0), each [C]
// (stored [1][C]):
//   - group_norm / instance_norm: statistics per sample and group over the group's channels × all points
//     (nn.GroupNorm; instance_norm is groups = channels, nn.InstanceNorm with affine=True);
//   - layernorm on a field: statistics per sample and point over the channels (PyTorch: channels moved last,
//     F.layer_norm over C). layernorm on rows stays LayerNormLayer (parameters gamma and beta).
// The forward keeps the input and the per-set mean and rstd for the backward, which is split into I and W.
#pragma once

#include <string>

#include "core/model/layer.h"
#include "kernels/backend.h"
#include "kernels/norm_geometry.h"

namespace sluice::model {

class FieldNormLayer : public Layer {
 public:
  enum class Over { kGroups, kChannelsAtEachPoint };

  // `type`: the config's name for the layer ("group_norm", "instance_norm", "layernorm").
  FieldNormLayer(kernels::Backend& backend, std::string type, Over over, const kernels::NormGeometry& geometry);

  std::string type() const override { return type_; }
  int64_t in_features() const override { return geometry_.features(); }
  int64_t out_features() const override { return geometry_.features(); }
  double flops_per_sample() const override;
  std::vector<Parameter*> parameters() override { return {&weight_, &bias_}; }
  void init(uint64_t seed) override;

  kernels::Tensor forward(kernels::Tensor x, const ForwardContext& context, LayerSaved& saved) override;
  kernels::Tensor backward_input(const kernels::Tensor& dy, LayerSaved& saved) override;
  void backward_weight(const kernels::Tensor& dy, LayerSaved& saved) override;

 private:
  int64_t statistics() const { return over_ == Over::kGroups ? geometry_.groups : geometry_.points; }

  kernels::Backend& backend_;
  std::string type_;
  Over over_;
  kernels::NormGeometry geometry_;
  Parameter weight_;
  Parameter bias_;
};

}  // namespace sluice::model
