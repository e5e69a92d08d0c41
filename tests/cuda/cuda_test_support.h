// Skips a GPU test with the reason when this machine has no usable CUDA device, so a CPU-only run reports
// "skipped: no CUDA device: ..." instead of passing silently or failing on the missing driver.
// With the environment variable SLUICE_REQUIRE_CUDA set (non-empty), as on a machine lent for GPU checks, a missing
// device FAILS the test instead: there a skip would read as "ok" while nothing ran on a GPU.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_device.h"

namespace sluice::testing {

// Whether SLUICE_REQUIRE_CUDA is set to a non-empty value.
inline bool cuda_device_required() {
  const char* value = std::getenv("SLUICE_REQUIRE_CUDA");
  return value != nullptr && value[0] != '\0';
}

}  // namespace sluice::testing

// For SetUp() or a test body (both return void); a fatal failure in SetUp() keeps the body from running.
#define SLUICE_SKIP_WITHOUT_CUDA_DEVICE()                                                                       \
  do {                                                                                                          \
    const std::string sluice_cuda_reason = ::sluice::kernels::cuda_unavailable_reason();                         \
    if (!sluice_cuda_reason.empty()) {                                                                          \
      if (::sluice::testing::cuda_device_required()) {                                                          \
        GTEST_FAIL() << "no CUDA device, and SLUICE_REQUIRE_CUDA is set (a GPU run must not skip): "            \
                     << sluice_cuda_reason;                                                                     \
      }                                                                                                         \
      GTEST_SKIP() << "no CUDA device: " << sluice_cuda_reason;                                                 \
    }                                                                                                           \
  } while (0)

namespace sluice::testing {

// max_i |actual_i - expected_i| / max_i |expected_i|: an error relative to the tensor's scale, because
// element-wise relative error is meaningless for elements that cancel to nearly zero.
// HUGE_VAL when the sizes differ or any element on either side is not finite: no compared op should produce one,
// and NaN compares false with everything, so std::max would drop it and an all-NaN result would pass.
inline double relative_max_error(const std::vector<float>& expected, const std::vector<float>& actual) {
  if (expected.size() != actual.size()) return HUGE_VAL;
  double scale = 0.0;
  double error = 0.0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const float e = expected[i];
    const float a = actual[i];
    if (!std::isfinite(e) || !std::isfinite(a)) return HUGE_VAL;
    scale = std::max(scale, static_cast<double>(std::abs(e)));
    error = std::max(error, std::abs(static_cast<double>(a) - static_cast<double>(e)));
  }
  return scale > 0.0 ? error / scale : error;
}

}  // namespace sluice::testing
