// The CPU backend's normalizations of fields (kernels/cpu/cpu_field_norm.cc): group norm against a double reference,
// the same bits on 1, 2 and 3 threads, parameter gradients that accumulate, and the argument checks of Backend.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "kernels/cpu/blas_threads.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/parallel_blocks.h"
#include "tests/kernels/random_tensor.h"

namespace sluice::kernels {
namespace {

constexpr int64_t kSamples = 5;
const NormGeometry kGeometry{6, 3, 7, 1e-5f};  // 6 channels in 3 groups, 7 points

struct Results {
  std::vector<float> y, mean, rstd, dx, weight_grad, bias_grad;
};

std::vector<float> values(const Tensor& t) { return std::vector<float>(t.data(), t.data() + t.size()); }

// Forward, backward_input and the parameter gradients of one op family on `threads` threads.
Results run(bool groups, int threads) {
  Backend& backend = cpu_backend();
  const NormGeometry& g = kGeometry;
  const int64_t stats = groups ? g.groups : g.points;
  const Tensor x = random_tensor(kSamples, g.features(), 1), dy = random_tensor(kSamples, g.features(), 2);
  const Tensor weight = random_tensor(1, g.channels, 3), bias = random_tensor(1, g.channels, 4);
  Tensor y = backend.zeros(kSamples, g.features()), dx = backend.zeros(kSamples, g.features());
  Tensor mean = backend.zeros(kSamples, stats), rstd = backend.zeros(kSamples, stats);
  Tensor weight_grad = backend.zeros(1, g.channels), bias_grad = backend.zeros(1, g.channels);
  const int host_threads = blas_thread_count();
  const SpreadThresholdForTests spread(0.0);  // these small shapes run on the whole team too
  set_blas_thread_count(threads);
  if (groups) {
    backend.group_norm_forward(g, x, weight, bias, y, mean, rstd);
    backend.group_norm_backward_input(g, dy, x, weight, mean, rstd, dx);
    backend.group_norm_accumulate_param_grads(g, dy, x, mean, rstd, weight_grad, bias_grad);
  } else {
    backend.channel_layernorm_forward(g, x, weight, bias, y, mean, rstd);
    backend.channel_layernorm_backward_input(g, dy, x, weight, mean, rstd, dx);
    backend.channel_layernorm_accumulate_param_grads(g, dy, x, mean, rstd, weight_grad, bias_grad);
  }
  set_blas_thread_count(host_threads);
  return {values(y), values(mean), values(rstd), values(dx), values(weight_grad), values(bias_grad)};
}

TEST(CpuFieldNorm, GroupNormForwardIsTheDoubleFormula) {
  const Results r = run(true, 1);
  const NormGeometry& g = kGeometry;
  const Tensor x = random_tensor(kSamples, g.features(), 1);
  const Tensor weight = random_tensor(1, g.channels, 3), bias = random_tensor(1, g.channels, 4);
  const int64_t size = g.channels / g.groups * g.points;
  for (int64_t n = 0; n < kSamples; ++n) {
    for (int64_t s = 0; s < g.groups; ++s) {
      const float* in = x.data() + n * g.features() + s * size;
      double sum = 0.0, squares = 0.0;
      for (int64_t k = 0; k < size; ++k) sum += in[k];
      const double mu = sum / size;
      for (int64_t k = 0; k < size; ++k) squares += (in[k] - mu) * (in[k] - mu);
      const double rstd = 1.0 / std::sqrt(squares / size + 1e-5);
      for (int64_t k = 0; k < size; ++k) {
        const int64_t c = (s * size + k) / g.points;
        const double expected = (in[k] - mu) * rstd * weight.data()[c] + bias.data()[c];
        EXPECT_NEAR(r.y[n * g.features() + s * size + k], expected, 1e-5) << n << " " << s << " " << k;
      }
    }
  }
}

TEST(CpuFieldNorm, TheBitsDoNotDependOnTheThreadCount) {
  for (bool groups : {true, false}) {
    const Results one = run(groups, 1);
    for (int threads : {2, 3}) {
      const Results many = run(groups, threads);
      EXPECT_EQ(one.y, many.y) << groups << " " << threads;
      EXPECT_EQ(one.mean, many.mean);
      EXPECT_EQ(one.rstd, many.rstd);
      EXPECT_EQ(one.dx, many.dx);
      EXPECT_EQ(one.weight_grad, many.weight_grad);
      EXPECT_EQ(one.bias_grad, many.bias_grad);
    }
  }
}

TEST(CpuFieldNorm, ParameterGradientsAccumulate) {
  Backend& backend = cpu_backend();
  const NormGeometry& g = kGeometry;
  const Tensor x = random_tensor(kSamples, g.features(), 1), dy = random_tensor(kSamples, g.features(), 2);
  const Tensor weight = random_tensor(1, g.channels, 3), bias = random_tensor(1, g.channels, 4);
  Tensor y = backend.zeros(kSamples, g.features());
  Tensor mean = backend.zeros(kSamples, g.groups), rstd = backend.zeros(kSamples, g.groups);
  backend.group_norm_forward(g, x, weight, bias, y, mean, rstd);
  Tensor weight_grad = backend.zeros(1, g.channels), bias_grad = backend.zeros(1, g.channels);
  backend.fill(1.0f, weight_grad);
  backend.fill(2.0f, bias_grad);
  const Results once = run(true, 1);
  backend.group_norm_accumulate_param_grads(g, dy, x, mean, rstd, weight_grad, bias_grad);
  for (int64_t c = 0; c < g.channels; ++c) {
    EXPECT_EQ(weight_grad.data()[c], 1.0f + once.weight_grad[static_cast<size_t>(c)]);
    EXPECT_EQ(bias_grad.data()[c], 2.0f + once.bias_grad[static_cast<size_t>(c)]);
  }
}

void expect_invalid(const std::function<void()>& call, const std::string& words) {
  try {
    call();
    ADD_FAILURE() << "accepted; expected an error with: " << words;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(CpuFieldNorm, BackendChecksTheArguments) {
  Backend& backend = cpu_backend();
  const NormGeometry& g = kGeometry;
  const Tensor x = random_tensor(2, g.features(), 1);
  const Tensor weight = random_tensor(1, g.channels, 3), bias = random_tensor(1, g.channels, 4);
  Tensor y = backend.zeros(2, g.features()), mean = backend.zeros(2, g.groups), rstd = backend.zeros(2, g.groups);
  Tensor wrong = backend.zeros(2, g.points);
  expect_invalid([&] { backend.group_norm_forward(g, x, weight, bias, y, wrong, rstd); }, "group_norm_forward");
  expect_invalid([&] { backend.group_norm_forward(g, x, weight, bias, y, wrong, rstd); }, "mean");
  expect_invalid([&] { backend.channel_layernorm_forward(g, x, weight, bias, y, mean, rstd); },
                 "channel_layernorm_forward");
  NormGeometry bad = g;
  bad.groups = 4;
  expect_invalid([&] { backend.group_norm_forward(bad, x, weight, bias, y, mean, rstd); }, "groups must divide");
  expect_invalid([&] { backend.group_norm_backward_input(g, x, x, bias, mean, rstd, wrong); }, "dx");
}

}  // namespace
}  // namespace sluice::kernels
