// relu | gelu | tanh as a layer of its own.
#pragma once

#include "core/model/layer.h"
#include "kernels/backend.h"

namespace sluice::model {

class ActivationLayer : public Layer {
 public:
  ActivationLayer(kernels::Backend& backend, kernels::Activation activation, int64_t features);

  std::string type() const override { return kernels::activation_name(activation_); }
  int64_t in_features() const override { return features_; }
  int64_t out_features() const override { return features_; }
  double flops_per_sample() const override;

  kernels::Tensor forward(const kernels::Tensor& x, const ForwardContext& context, LayerSaved& saved) override;
  kernels::Tensor backward_input(const kernels::Tensor& dy, LayerSaved& saved) override;

 private:
  kernels::Backend& backend_;
  kernels::Activation activation_;
  int64_t features_;
};

}  // namespace sluice::model
