// Skips a GPU test with the reason when this machine has no usable CUDA device, so a CPU-only run reports
// "skipped: no CUDA device: ..." instead of passing silently or failing on the missing driver.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_device.h"

#define SLUICE_SKIP_WITHOUT_CUDA_DEVICE()                                         \
  do {                                                                            \
    const std::string sluice_cuda_reason = sluice::kernels::cuda_unavailable_reason(); \
    if (!sluice_cuda_reason.empty()) GTEST_SKIP() << "no CUDA device: " << sluice_cuda_reason; \
  } while (0)

namespace sluice::testing {

// max_i |actual_i - expected_i| / max_i |expected_i|: an error relative to the tensor's scale, because
// element-wise relative error is meaningless for elements that cancel to nearly zero.
inline double relative_max_error(const std::vector<float>& expected, const std::vector<float>& actual) {
  double scale = 0.0;
  double error = 0.0;
  for (size_t i = 0; i < expected.size(); ++i) {
    scale = std::max(scale, static_cast<double>(std::abs(expected[i])));
    error = std::max(error, static_cast<double>(std::abs(actual[i] - expected[i])));
  }
  return scale > 0.0 ? error / scale : error;
}

}  // namespace sluice::testing
