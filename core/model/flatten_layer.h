// flatten: a field [C, D..] read as rows of C·ΠD features, the memory unchanged (the step from convolutions to
// linear layers); PyTorch's nn.Flatten on an N·C·D·H·W batch.
#pragma once

#include "core/model/layer.h"

namespace sluice::model {

class FlattenLayer : public Layer {
 public:
  explicit FlattenLayer(int64_t features) : features_(features) {}

  std::string type() const override { return "flatten"; }
  int64_t in_features() const override { return features_; }
  int64_t out_features() const override { return features_; }
  double flops_per_sample() const override { return 0.0; }

  kernels::Tensor forward(kernels::Tensor x, const ForwardContext& context, LayerSaved& saved) override;
  kernels::Tensor backward_input(const kernels::Tensor& dy, LayerSaved& saved) override;

 private:
  int64_t features_;
};

}  // namespace sluice::model
