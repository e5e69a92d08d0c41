// What of a field model the CUDA backend cannot run yet, so that the config parser refuses it before anything runs
// instead of the first step failing with kUnsupported. The CUDA backend runs every field layer (convolutions with
// every padding, transposed convolutions, pooling, upsampling, group/instance norm, layernorm over channels, concat
// and add: kernels/cuda); only cross_entropy on a field output (the per-point softmax) has a CPU kernel only.
#pragma once

#include "core/config/config.h"

namespace sluice::config {

// Whether `loss` on the model's output needs the per-point softmax cross-entropy, which has no CUDA kernel yet.
bool loss_needs_field_cross_entropy(const ModelSpec& model, model::LossKind loss);

}  // namespace sluice::config
