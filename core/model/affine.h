// y = x * W^T + b, the building block of the linear and residual-MLP layers. W is [out][in] and b is [1][out],
// as in PyTorch, so weights can be compared with and imported from it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/layer.h"
#include "kernels/backend.h"

namespace sluice::model {

class Affine {
 public:
  // `prefix` names the parameters: "" gives "weight"/"bias", "fc1." gives "fc1.weight"/"fc1.bias".
  Affine(kernels::Backend& backend, int64_t in_features, int64_t out_features, bool with_bias,
         const std::string& prefix);

  kernels::Tensor forward(const kernels::Tensor& x);
  // activation(forward(x)), with the bias add and the activation in one backend op; `pre` receives forward(x),
  // which an activation differentiating from its input (GELU) needs for backward.
  kernels::Tensor forward_activated(const kernels::Tensor& x, kernels::Activation activation, kernels::Tensor& pre);
  kernels::Tensor backward_input(const kernels::Tensor& dy);
  // weight.grad += dy^T x, bias.grad += column sums of dy
  void accumulate_grads(const kernels::Tensor& dy, const kernels::Tensor& x);
  // Uniform in +-1/sqrt(in) (PyTorch's default), from streams first_parameter and first_parameter + 1.
  void init(uint64_t seed, int layer_index, int first_parameter);
  void append_parameters(std::vector<Parameter*>& out);

  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }
  double flops_per_sample() const;

 private:
  kernels::Backend& backend_;
  int64_t in_features_;
  int64_t out_features_;
  bool with_bias_;
  Parameter weight_;
  Parameter bias_;
};

}  // namespace sluice::model
