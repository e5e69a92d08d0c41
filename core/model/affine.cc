#include "core/model/affine.h"

#include <cmath>

#include "core/common/error.h"
#include "core/model/layer_costs.h"

namespace sluice::model {

using kernels::Tensor;
using kernels::Transpose;

Affine::Affine(kernels::Backend& backend, int64_t in_features, int64_t out_features, bool with_bias,
               const std::string& prefix)
    : backend_(backend), in_features_(in_features), out_features_(out_features), with_bias_(with_bias) {
  if (in_features <= 0 || out_features <= 0) {
    throw Error(ErrorCode::kInvalidArgument, "affine map needs positive sizes, got " + std::to_string(in_features) +
                                                 " inputs and " + std::to_string(out_features) + " outputs");
  }
  weight_.name = prefix + "weight";
  weight_.value = backend.zeros(out_features, in_features);
  weight_.grad = backend.zeros(out_features, in_features);
  if (with_bias_) {
    bias_.name = prefix + "bias";
    bias_.value = backend.zeros(1, out_features);
    bias_.grad = backend.zeros(1, out_features);
    bias_.shape = {out_features};
  }
}

Tensor Affine::forward(const Tensor& x) {
  Tensor y = backend_.empty(x.rows(), out_features_);
  backend_.gemm(Transpose::kNo, Transpose::kYes, 1.0f, x, weight_.value, 0.0f, y);
  if (with_bias_) backend_.add_bias(bias_.value, y);
  return y;
}

Tensor Affine::forward_activated(const Tensor& x, kernels::Activation activation, Tensor& pre) {
  pre = backend_.empty(x.rows(), out_features_);
  backend_.gemm(Transpose::kNo, Transpose::kYes, 1.0f, x, weight_.value, 0.0f, pre);
  Tensor y = backend_.empty(x.rows(), out_features_);
  if (with_bias_) {
    backend_.bias_activation_forward(activation, bias_.value, pre, y);
  } else {
    backend_.activation_forward(activation, pre, y);
  }
  return y;
}

Tensor Affine::backward_input(const Tensor& dy) {
  Tensor dx = backend_.empty(dy.rows(), in_features_);
  backend_.gemm(Transpose::kNo, Transpose::kNo, 1.0f, dy, weight_.value, 0.0f, dx);
  return dx;
}

void Affine::accumulate_grads(const Tensor& dy, const Tensor& x) {
  backend_.gemm(Transpose::kYes, Transpose::kNo, 1.0f, dy, x, 1.0f, weight_.grad);
  if (with_bias_) backend_.accumulate_bias_grad(dy, bias_.grad);
}

void Affine::init(uint64_t seed, int layer_index, int first_parameter) {
  const float bound = static_cast<float>(1.0 / std::sqrt(static_cast<double>(in_features_)));
  backend_.fill_uniform(kernels::init_stream(seed, layer_index, first_parameter), -bound, bound, weight_.value);
  if (with_bias_) {
    backend_.fill_uniform(kernels::init_stream(seed, layer_index, first_parameter + 1), -bound, bound, bias_.value);
  }
}

void Affine::append_parameters(std::vector<Parameter*>& out) {
  out.push_back(&weight_);
  if (with_bias_) out.push_back(&bias_);
}

double Affine::flops_per_sample() const {
  return dense_flops(in_features_, out_features_);
}

}  // namespace sluice::model
