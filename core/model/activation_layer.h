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

  kernels::Activation activation() const { return activation_; }

  kernels::Tensor forward(kernels::Tensor x, const ForwardContext& context, LayerSaved& saved) override;
  kernels::Tensor backward_input(const kernels::Tensor& dy, LayerSaved& saved) override;
  // What forward keeps for backward, given its input x and output y; also used by a layer that ran this
  // activation fused into its own forward (Layer::forward_with_next).
  void keep_for_backward(kernels::Tensor x, const kernels::Tensor& y, LayerSaved& saved) const;

 private:
  kernels::Backend& backend_;
  kernels::Activation activation_;
  int64_t features_;
};

}  // namespace sluice::model
