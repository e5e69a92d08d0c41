#include "core/model/layernorm_layer.h"

#include <string>

#include "core/common/error.h"

namespace sluice::model {

using kernels::Tensor;

// saved.tensors layout
constexpr size_t kInput = 0;
constexpr size_t kMean = 1;
constexpr size_t kRstd = 2;

LayerNormLayer::LayerNormLayer(kernels::Backend& backend, int64_t features, float eps)
    : backend_(backend), features_(features), eps_(eps) {
  if (features <= 0 || !(eps > 0.0f)) {
    throw Error(ErrorCode::kInvalidArgument, "layernorm needs features > 0 and eps > 0, got " +
                                                 std::to_string(features) + " and " + std::to_string(eps));
  }
  gamma_.name = "gamma";
  gamma_.value = backend.zeros(1, features);
  gamma_.grad = backend.zeros(1, features);
  gamma_.shape = {features};
  beta_.name = "beta";
  beta_.value = backend.zeros(1, features);
  beta_.grad = backend.zeros(1, features);
  beta_.shape = {features};
  init(0);
}

void LayerNormLayer::init(uint64_t seed) {
  (void)seed;  // the identity transform is the standard start; no randomness
  backend_.fill(1.0f, gamma_.value);
  backend_.fill(0.0f, beta_.value);
}

Tensor LayerNormLayer::forward(Tensor x, const ForwardContext& context, LayerSaved& saved) {
  (void)context;
  Tensor y = backend_.empty(x.rows(), x.cols());
  Tensor mean = backend_.empty(x.rows(), 1);
  Tensor rstd = backend_.empty(x.rows(), 1);
  backend_.layernorm_forward(x, gamma_.value, beta_.value, eps_, y, mean, rstd);
  saved.tensors.clear();
  saved.tensors.push_back(std::move(x));
  saved.tensors.push_back(std::move(mean));
  saved.tensors.push_back(std::move(rstd));
  return y;
}

Tensor LayerNormLayer::backward_input(const Tensor& dy, LayerSaved& saved) {
  Tensor dx = backend_.empty(dy.rows(), dy.cols());
  backend_.layernorm_backward_input(dy, saved.tensors[kInput], gamma_.value, saved.tensors[kMean],
                                    saved.tensors[kRstd], dx);
  return dx;
}

void LayerNormLayer::backward_weight(const Tensor& dy, LayerSaved& saved) {
  backend_.layernorm_accumulate_param_grads(dy, saved.tensors[kInput], saved.tensors[kMean], saved.tensors[kRstd],
                                            gamma_.grad, beta_.grad);
}

}  // namespace sluice::model
