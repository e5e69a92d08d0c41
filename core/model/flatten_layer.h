// flatten: a field [C, D..] read as rows of C·ΠD features, the memory unchanged (the step from convolutions to
// linear layers); PyTorch's nn.Flatten on an N·C·D·H·W batch. reshape is the same layer with another output shape
// (rows to a field, a field to another field of as many elements; PyTorch's x.reshape(N, *shape)): the shapes are
// the config's business (sample_shape.cc), the values pass through unchanged.
#pragma once

#include <string>
#include <utility>

#include "core/model/layer.h"

namespace sluice::model {

class FlattenLayer : public Layer {
 public:
  FlattenLayer(std::string type, int64_t features) : type_(std::move(type)), features_(features) {}

  std::string type() const override { return type_; }
  int64_t in_features() const override { return features_; }
  int64_t out_features() const override { return features_; }
  double flops_per_sample() const override { return 0.0; }

  kernels::Tensor forward(kernels::Tensor x, const ForwardContext& context, LayerSaved& saved) override;
  kernels::Tensor backward_input(const kernels::Tensor& dy, LayerSaved& saved) override;

 private:
  std::string type_;  // "flatten" or "reshape"
  int64_t features_;
};

}  // namespace sluice::model
