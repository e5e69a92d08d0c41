// The CPU backend's GELU (tanh approximation) forward and backward against a double-precision evaluation of the
// textbook tanh form, with stated error bounds, and the property the pipeline's bit-exactness rests on: an
// element's result does not depend on its position (vector body or tail) or on the op (fused bias or not).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cpu/cpu_backend.h"

namespace sluice::kernels {
namespace {

double reference_u(double x) { return std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x); }
// 0.5 x (1 + tanh(u)) written as x / (1 + exp(-2u)): the same function, without the cancellation that makes the
// tanh form lose all digits in double below x ~ -9.
double reference_gelu(double x) { return x / (1.0 + std::exp(-2.0 * reference_u(x))); }
double reference_gelu_derivative(double x) {
  const double t = std::tanh(reference_u(x));
  const double u_derivative = std::sqrt(2.0 / M_PI) * (1.0 + 3.0 * 0.044715 * x * x);
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * u_derivative;
}

// A dense grid over [-12, 12] (where GELU goes from ~1e-40 to x), random values, and edge values.
std::vector<float> inputs() {
  std::vector<float> x;
  for (int i = -120000; i <= 120000; ++i) x.push_back(static_cast<float>(i) * 1e-4f);
  std::mt19937 generator(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (int i = 0; i < 100001; ++i) x.push_back(normal(generator));
  for (float v : {0.0f, -0.0f, 1e-40f, -1e-40f, 1e-20f, -1e-20f, 1e-7f, 30.0f, -30.0f, 1e30f, -9.0f, -10.5f}) {
    x.push_back(v);
  }
  return x;  // 340016 elements: not a multiple of 4 plus 1
}

Tensor row_of(const std::vector<float>& v) {
  Tensor t = Tensor::host(1, static_cast<int64_t>(v.size()));
  std::memcpy(t.data(), v.data(), sizeof(float) * v.size());
  return t;
}

// Error in units of float epsilon relative to max(|reference|, floor): a relative bound where the value is not
// tiny, an absolute one (floor * eps) below it, where float cannot carry relative accuracy through the tanh form.
double scaled_error(double got, double reference, double floor) {
  return std::fabs(got - reference) / (std::max(std::fabs(reference), floor) * 1.1920928955078125e-7);
}

// How much GELU amplifies a relative error delta in z = 2u (float's rounding of u): y = x / (1 + exp(-z)) has
// d(log y)/dz = 1 - s, so y's relative error is about |z| (1 - s) delta; large only for negative x (~70 at -9.4).
// The old tanh form was worse there: 1 + tanh(u) cancels, an absolute error ~|x| eps / 2.
double condition(double x) {
  const double z = 2.0 * reference_u(x);
  return 1.0 + std::fabs(z) * (1.0 - 1.0 / (1.0 + std::exp(-z)));
}

TEST(GeluAccuracy, ForwardWithinThreeEpsilonTimesConditionOfTheDoubleReference) {
  const std::vector<float> x = inputs();
  Tensor x_t = row_of(x), y_t = Tensor::host(1, x_t.size());
  cpu_backend().activation_forward(Activation::kGelu, x_t, y_t);
  double worst = 0.0, worst_x = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double error = scaled_error(y_t.data()[i], reference_gelu(x[i]), 1e-30) / condition(x[i]);
    EXPECT_LE(error, 3.0) << "x=" << x[i] << " got " << y_t.data()[i] << " reference " << reference_gelu(x[i]);
    if (error > 3.0) break;
    if (error > worst) worst = error, worst_x = x[i];
  }
  std::printf("forward: worst error %.3f eps (relative / condition, absolute below 1e-30) at x=%g\n", worst, worst_x);
}

TEST(GeluAccuracy, BackwardWithinFourEpsilonOfTheDoubleReference) {
  const std::vector<float> x = inputs();
  Tensor x_t = row_of(x), dy_t = row_of(std::vector<float>(x.size(), 1.0f)), dx_t = Tensor::host(1, x_t.size());
  cpu_backend().activation_backward(Activation::kGelu, x_t, dy_t, dx_t);
  double worst = 0.0, worst_x = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    // The derivative crosses zero near x = -0.75 and has magnitude up to ~1.13: measure against its scale.
    const double error = scaled_error(dx_t.data()[i], reference_gelu_derivative(x[i]), 1.0);
    EXPECT_LE(error, 4.0) << "x=" << x[i] << " got " << dx_t.data()[i] << " reference "
                          << reference_gelu_derivative(x[i]);
    if (error > 4.0) break;
    if (error > worst) worst = error, worst_x = x[i];
  }
  std::printf("backward: worst error %.3f eps (absolute, scale 1) at x=%g\n", worst, worst_x);
}

TEST(GeluAccuracy, ResultDoesNotDependOnPositionOrFusedBias) {
  const std::vector<float> x = inputs();
  const int64_t n = 1027;  // one row: 256 vector groups and a tail of 3
  Tensor x_t = Tensor::host(1, n), y_t = Tensor::host(1, n), dx_t = Tensor::host(1, n);
  std::memcpy(x_t.data(), x.data() + 5000, sizeof(float) * n);
  Tensor ones = row_of(std::vector<float>(n, 1.0f));
  cpu_backend().activation_forward(Activation::kGelu, x_t, y_t);
  cpu_backend().activation_backward(Activation::kGelu, x_t, ones, dx_t);
  Tensor zero_bias = row_of(std::vector<float>(n, 0.0f)), pre = row_of(std::vector<float>(x_t.data(), x_t.data() + n));
  Tensor fused_y = Tensor::host(1, n);
  cpu_backend().bias_activation_forward(Activation::kGelu, zero_bias, pre, fused_y);
  for (int64_t i = 0; i < n; ++i) {
    Tensor one = row_of({x_t.data()[i]}), one_y = Tensor::host(1, 1), one_dx = Tensor::host(1, 1);
    Tensor one_dy = row_of({1.0f});
    cpu_backend().activation_forward(Activation::kGelu, one, one_y);
    cpu_backend().activation_backward(Activation::kGelu, one, one_dy, one_dx);
    ASSERT_EQ(std::memcmp(one_y.data(), y_t.data() + i, 4), 0) << "forward, element " << i;
    ASSERT_EQ(std::memcmp(one_dx.data(), dx_t.data() + i, 4), 0) << "backward, element " << i;
    ASSERT_EQ(std::memcmp(fused_y.data() + i, y_t.data() + i, 4), 0) << "fused bias, element " << i;
  }
}

// The sixteen-lane bulk (AVX-512F, where the CPU has it) against the four-lane code over every input: the whole
// array runs through the bulk, chunks of 15 elements (three groups of four and a padded tail of three) never reach
// it, and both must give the same bits, so results do not depend on the CPU's vector width either.
TEST(GeluAccuracy, SixteenLanesGiveTheFourLaneBits) {
  const std::vector<float> x = inputs();
  const int64_t n = static_cast<int64_t>(x.size());
  Tensor x_t = row_of(x), ones = row_of(std::vector<float>(x.size(), 1.0f));
  Tensor y_t = Tensor::host(1, n), dx_t = Tensor::host(1, n);
  cpu_backend().activation_forward(Activation::kGelu, x_t, y_t);
  cpu_backend().activation_backward(Activation::kGelu, x_t, ones, dx_t);
  constexpr int64_t kChunk = 15;
  Tensor chunk = Tensor::host(1, kChunk), chunk_ones = row_of(std::vector<float>(kChunk, 1.0f));
  Tensor chunk_y = Tensor::host(1, kChunk), chunk_dx = Tensor::host(1, kChunk);
  for (int64_t start = 0; start + kChunk <= n; start += kChunk) {
    std::memcpy(chunk.data(), x.data() + start, sizeof(float) * kChunk);
    cpu_backend().activation_forward(Activation::kGelu, chunk, chunk_y);
    cpu_backend().activation_backward(Activation::kGelu, chunk, chunk_ones, chunk_dx);
    ASSERT_EQ(std::memcmp(chunk_y.data(), y_t.data() + start, sizeof(float) * kChunk), 0) << "forward at " << start;
    ASSERT_EQ(std::memcmp(chunk_dx.data(), dx_t.data() + start, sizeof(float) * kChunk), 0) << "backward at " << start;
  }
}

}  // namespace
}  // namespace sluice::kernels
