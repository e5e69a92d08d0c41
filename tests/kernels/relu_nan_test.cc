// ReLU lets NaN through as PyTorch does (torch.relu(nan) is nan, and its backward passes the gradient where the
// output is NaN): a NaN turned into 0 would hide a broken input behind a plausible activation. Every other value
// gives the bits it gave before (the old formula x > 0 ? x : 0 is the reference here), including -0, denormals
// and +-Inf, through the plain forward, the fused bias + ReLU and the backward.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/cpu/cpu_backend.h"

namespace sluice::kernels {
namespace {

const float kNan = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

std::vector<float> probe_values() {
  return {-2.0f, -0.0f, 0.0f, 1e-45f, -1e-45f, 0.5f, kInf, -kInf, std::numeric_limits<float>::max(), kNan, -kNan};
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

TEST(ReluNan, ForwardPassesNanAndKeepsEveryOtherValueBitwise) {
  Backend& backend = cpu_backend();
  const std::vector<float> v = probe_values();
  const int64_t n = static_cast<int64_t>(v.size());
  Tensor x = Tensor::host_from(1, n, v);
  Tensor y = Tensor::host(1, n);
  backend.activation_forward(Activation::kRelu, x, y);
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(v[i])) {
      EXPECT_TRUE(std::isnan(y.data()[i])) << "relu(nan) gave " << y.data()[i];
    } else {
      EXPECT_TRUE(same_bits(y.data()[i], v[i] > 0.0f ? v[i] : 0.0f)) << "relu(" << v[i] << ") = " << y.data()[i];
    }
  }
}

TEST(ReluNan, FusedBiasReluPassesNan) {
  Backend& backend = cpu_backend();
  Tensor pre = Tensor::host_from(2, 3, {kNan, -1.0f, 2.0f, 0.5f, kNan, -3.0f});
  const Tensor bias = Tensor::host_from(1, 3, {0.25f, 0.25f, 0.25f});
  Tensor y = Tensor::host(2, 3);
  backend.bias_activation_forward(Activation::kRelu, bias, pre, y);
  const std::vector<float> out = y.to_vector();
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_TRUE(std::isnan(out[4]));
  EXPECT_TRUE(same_bits(out[1], 0.0f));
  EXPECT_TRUE(same_bits(out[2], 2.25f));
  EXPECT_TRUE(same_bits(out[3], 0.75f));
  EXPECT_TRUE(same_bits(out[5], 0.0f));
}

TEST(ReluNan, BackwardPassesTheGradientWhereTheOutputIsNan) {
  Backend& backend = cpu_backend();
  const std::vector<float> saved = {kNan, 0.0f, 1.5f, -0.0f, kInf};
  const std::vector<float> grads = {0.5f, 0.25f, -2.0f, 3.0f, 7.0f};
  Tensor s = Tensor::host_from(1, 5, saved);
  Tensor dy = Tensor::host_from(1, 5, grads);
  Tensor dx = Tensor::host(1, 5);
  backend.activation_backward(Activation::kRelu, s, dy, dx);
  const std::vector<float> out = dx.to_vector();
  EXPECT_TRUE(same_bits(out[0], 0.5f)) << out[0];  // PyTorch: threshold_backward passes dy where output is nan
  for (size_t i = 1; i < saved.size(); ++i) {
    EXPECT_TRUE(same_bits(out[i], saved[i] > 0.0f ? grads[i] : 0.0f)) << "at " << saved[i];
  }
}

}  // namespace
}  // namespace sluice::kernels
