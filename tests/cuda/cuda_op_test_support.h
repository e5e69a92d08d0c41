// What the CUDA-vs-CPU op tests share: a fixture holding both backends, the same random inputs for both, and every
// output of one op sequence downloaded to the host, in a fixed order with names for the messages.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <initializer_list>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/backend.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cuda/cuda_backend.h"
#include "tests/cuda/cuda_test_support.h"

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

// A fixture with both backends; skips (or fails with SLUICE_REQUIRE_CUDA set) without a CUDA device.
class CpuAndCudaBackends : public ::testing::Test {
 protected:
  void SetUp() override {
    SLUICE_SKIP_WITHOUT_CUDA_DEVICE();
    gpu_ = std::make_unique<kernels::CudaBackend>(0);
  }

  kernels::CpuBackend cpu_;
  std::unique_ptr<kernels::CudaBackend> gpu_;
};

}  // namespace sluice::testing
