// Which parts of a field model the CUDA backend cannot run yet, so that the config parser refuses them before
// anything runs (naming the layer) instead of the first step failing with kUnsupported. The CUDA backend runs
// convolutions (every padding), transposed convolutions, pooling, upsampling, concat and add (kernels/cuda); group
// and instance norm, layernorm over a field's channels and cross_entropy on a field output have CPU kernels only.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "core/config/config.h"

namespace sluice::config {

struct CudaFieldGap {
  size_t layer = 0;    // index into model.layers
  std::string reason;  // "group_norm has no CUDA kernel yet"
};

// The first layer of `model` that the CUDA backend cannot run, or nothing.
std::optional<CudaFieldGap> first_layer_cuda_lacks(const ModelSpec& model);

// Whether `loss` on the model's output needs the per-point softmax cross-entropy, which has no CUDA kernel yet.
bool loss_needs_field_cross_entropy(const ModelSpec& model, model::LossKind loss);

}  // namespace sluice::config
