#include "kernels/activation.h"

#include "core/common/error.h"

namespace sluice::kernels {

Activation parse_activation(const std::string& name) {
  if (name == "relu") return Activation::kRelu;
  if (name == "gelu") return Activation::kGelu;
  if (name == "tanh") return Activation::kTanh;
  throw Error(ErrorCode::kConfig, "unknown activation '" + name + "' (expected relu, gelu or tanh)");
}

const char* activation_name(Activation activation) {
  switch (activation) {
    case Activation::kRelu: return "relu";
    case Activation::kGelu: return "gelu";
    case Activation::kTanh: return "tanh";
  }
  return "unknown";
}

bool activation_backward_uses_input(Activation activation) { return activation == Activation::kGelu; }

}  // namespace sluice::kernels
