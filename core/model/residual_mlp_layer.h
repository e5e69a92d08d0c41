// residual_mlp: y = x + fc2(act(fc1(x))), fc1: features -> hidden, fc2: hidden -> features.
#pragma once

#include "core/model/affine.h"
#include "core/model/layer.h"
#include "kernels/backend.h"

namespace sluice::model {

class ResidualMlpLayer : public Layer {
 public:
  ResidualMlpLayer(kernels::Backend& backend, int64_t features, int64_t hidden, kernels::Activation activation);

  std::string type() const override { return "residual_mlp"; }
  int64_t in_features() const override { return fc1_.in_features(); }
  int64_t out_features() const override { return fc2_.out_features(); }
  double flops_per_sample() const override;
  std::vector<Parameter*> parameters() override;
  void init(uint64_t seed) override;

  kernels::Tensor forward(kernels::Tensor x, const ForwardContext& context, LayerSaved& saved) override;
  kernels::Tensor backward_input(const kernels::Tensor& dy, LayerSaved& saved) override;
  void backward_weight(const kernels::Tensor& dy, LayerSaved& saved) override;
  // Without dx, I computes only what W needs (dL/d(fc1 output)): fc1's dx GEMM and the skip add are saved.
  void backward_input_without_dx(const kernels::Tensor& dy, LayerSaved& saved) override;
  void backward_without_dx(const kernels::Tensor& dy, LayerSaved& saved) override;

 private:
  // dL/d(fc1 output) from dy: back through fc2 and the activation.
  kernels::Tensor fc1_output_grad(const kernels::Tensor& dy, const LayerSaved& saved);

  kernels::Backend& backend_;
  kernels::Activation activation_;
  Affine fc1_;
  Affine fc2_;
};

}  // namespace sluice::model
