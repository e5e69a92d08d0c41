// Host tensors of uniform values in [-1, 1) from a seeded generator, shared by the kernel tests.
#pragma once

#include <cstdint>
#include <random>

#include "kernels/tensor.h"

namespace sluice::kernels {

inline Tensor random_tensor(int64_t rows, int64_t cols, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  Tensor tensor = Tensor::host(rows, cols);
  for (int64_t i = 0; i < tensor.size(); ++i) tensor.data()[i] = uniform(generator);
  return tensor;
}

}  // namespace sluice::kernels
