// Small helpers shared by the model tests: reproducible inputs, bitwise comparison, layer factories.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/model/layer.h"
#include "kernels/tensor.h"

namespace sluice::model::testing {

// Uniform values in [-scale, scale], bounded away from 0 by `min_abs` (keeps ReLU inputs off its kink).
inline kernels::Tensor random_tensor(int64_t rows, int64_t cols, unsigned seed, float scale = 1.0f,
                                     float min_abs = 0.0f) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(min_abs, scale);
  std::bernoulli_distribution negative(0.5);
  kernels::Tensor tensor = kernels::Tensor::host(rows, cols);
  for (int64_t i = 0; i < tensor.size(); ++i) tensor.data()[i] = negative(generator) ? -uniform(generator) : uniform(generator);
  return tensor;
}

inline bool bits_equal(const kernels::Tensor& a, const kernels::Tensor& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         (a.size() == 0 || std::memcmp(a.data(), b.data(), a.bytes()) == 0);
}

// `type` as the YAML spells it ("linear", "residual_mlp", ...).
inline config::LayerSpec layer_spec(const std::string& type) {
  config::LayerSpec spec;
  spec.type = config::find_layer_type(type).value();
  return spec;
}

inline config::LayerSpec linear_spec(int64_t outputs, bool bias = true) {
  config::LayerSpec spec = layer_spec("linear");
  spec.outputs = outputs;
  spec.bias = bias;
  return spec;
}

}  // namespace sluice::model::testing
