// The element-wise activations layers may use, and how their names appear in configs.
#pragma once

#include <string>

namespace sluice::kernels {

enum class Activation { kRelu, kGelu, kTanh };

// "relu" | "gelu" | "tanh"; anything else throws Error(kConfig) naming the bad name.
Activation parse_activation(const std::string& name);
const char* activation_name(Activation activation);

// ReLU and tanh differentiate from their OUTPUT, GELU from its INPUT: a layer stashes only the one it needs
// and passes it as `saved` to Backend::activation_backward.
bool activation_backward_uses_input(Activation activation);

}  // namespace sluice::kernels
