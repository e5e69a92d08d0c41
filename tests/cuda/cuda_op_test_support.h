// What the CUDA-vs-CPU op tests share: the same random inputs on both backends, and every output of one op
// sequence downloaded to the host, in a fixed order with names for the messages.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/backend.h"

namespace sluice::testing {

// `count` values uniform in [-1, 1), the same for the same seed.
inline std::vector<float> random_values(int64_t count, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(static_cast<size_t>(count));
  for (float& v : values) v = uniform(generator);
  return values;
}

struct Outputs {
  std::vector<std::string> names;
  std::vector<std::vector<float>> values;
};

// Copies each tensor to the host through `backend` (device tensors cannot be read directly).
inline Outputs download(kernels::Backend& backend,
                        std::initializer_list<std::pair<const char*, const kernels::Tensor*>> tensors) {
  Outputs out;
  for (const auto& [name, tensor] : tensors) {
    std::vector<float> v(static_cast<size_t>(tensor->size()));
    backend.to_host(*tensor, v.data());
    out.names.push_back(name);
    out.values.push_back(std::move(v));
  }
  return out;
}

}  // namespace sluice::testing
