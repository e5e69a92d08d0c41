#include "core/model/kernel_parameters.h"

#include <cmath>
#include <utility>

namespace sluice::model {

KernelParameters::KernelParameters(kernels::Backend& backend, int64_t rows, int64_t cols,
                                   std::vector<int64_t> weight_shape, bool with_bias, int64_t bias_features) {
  weight.name = "weight";
  weight.value = backend.zeros(rows, cols);
  weight.grad = backend.zeros(rows, cols);
  weight.shape = std::move(weight_shape);
  if (!with_bias) return;
  bias.emplace();
  bias->name = "bias";
  bias->value = backend.zeros(1, bias_features);
  bias->grad = backend.zeros(1, bias_features);
  bias->shape = {bias_features};
}

std::vector<Parameter*> KernelParameters::parameters() {
  std::vector<Parameter*> out{&weight};
  if (bias) out.push_back(&*bias);
  return out;
}

void KernelParameters::init(kernels::Backend& backend, uint64_t seed, int layer_index, int64_t fan_in) {
  const float bound = static_cast<float>(1.0 / std::sqrt(static_cast<double>(fan_in)));
  backend.fill_uniform(kernels::init_stream(seed, layer_index, 0), -bound, bound, weight.value);
  if (bias) backend.fill_uniform(kernels::init_stream(seed, layer_index, 1), -bound, bound, bias->value);
}

}  // namespace sluice::model
