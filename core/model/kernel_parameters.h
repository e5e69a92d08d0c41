// The weight and optional bias of a convolution-like layer (conv, conv_transpose): created with PyTorch's shapes for
// the checkpoint, initialized as PyTorch does by default (uniform in ±1/√fan_in, kaiming_uniform with a = √5 comes to
// the same bound) from the layer's own streams: 0 for the weight, 1 for the bias.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/model/layer.h"
#include "kernels/backend.h"

namespace sluice::model {

struct KernelParameters {
  Parameter weight;              // [rows][cols], stored as weight.shape
  std::optional<Parameter> bias;  // [1][features], stored as [features]

  KernelParameters() = default;
  KernelParameters(kernels::Backend& backend, int64_t rows, int64_t cols, std::vector<int64_t> weight_shape,
                   bool with_bias, int64_t bias_features);

  std::vector<Parameter*> parameters();
  void init(kernels::Backend& backend, uint64_t seed, int layer_index, int64_t fan_in);
  const kernels::Tensor* bias_value() const { return bias ? &bias->value : nullptr; }
  kernels::Tensor* bias_grad() { return bias ? &bias->grad : nullptr; }
};

}  // namespace sluice::model
