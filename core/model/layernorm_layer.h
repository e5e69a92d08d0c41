// layernorm over the features of each sample, with learned gamma (init 1) and beta (init 0).
#pragma once

#include "core/model/layer.h"
#include "core/model/layer_costs.h"
#include "kernels/backend.h"

namespace sluice::model {

class LayerNormLayer : public Layer {
 public:
  LayerNormLayer(kernels::Backend& backend, int64_t features, float eps);

  std::string type() const override { return "layernorm"; }
  int64_t in_features() const override { return features_; }
  int64_t out_features() const override { return features_; }
  double flops_per_sample() const override { return layernorm_flops(features_); }
  std::vector<Parameter*> parameters() override { return {&gamma_, &beta_}; }
  void init(uint64_t seed) override;

  kernels::Tensor forward(kernels::Tensor x, const ForwardContext& context, LayerSaved& saved) override;
  kernels::Tensor backward_input(const kernels::Tensor& dy, LayerSaved& saved) override;
  void backward_weight(const kernels::Tensor& dy, LayerSaved& saved) override;

 private:
  kernels::Backend& backend_;
  int64_t features_;
  float eps_;
  Parameter gamma_;
  Parameter beta_;
};

}  // namespace sluice::model
