// The CPU backend's softmax cross-entropy over the channels at each point of a field
// (Backend::channel_softmax_cross_entropy): the double formula, the same bits on 1, 2 and 3 threads, and the
// argument checks of Backend.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "kernels/cpu/blas_threads.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/parallel_blocks.h"
#include "tests/kernels/random_tensor.h"

namespace sluice::kernels {
namespace {

constexpr int64_t kSamples = 5, kChannels = 3, kPoints = 7, kFeatures = kChannels * kPoints;

// Soft targets: at each point, |noise| normalized over the channels.
Tensor targets() {
  Tensor t = random_tensor(kSamples, kFeatures, 2);
  for (int64_t n = 0; n < kSamples; ++n) {
    for (int64_t p = 0; p < kPoints; ++p) {
      float sum = 0.0f;
      for (int64_t c = 0; c < kChannels; ++c) sum += (t.at(n, c * kPoints + p) = std::fabs(t.at(n, c * kPoints + p)));
      for (int64_t c = 0; c < kChannels; ++c) t.at(n, c * kPoints + p) /= sum;
    }
  }
  return t;
}

struct Result {
  double sum = 0.0;
  std::vector<float> grad;
};

Result run(int threads) {
  Backend& backend = cpu_backend();
  const Tensor logits = random_tensor(kSamples, kFeatures, 1), target = targets();
  Tensor grad = backend.zeros(kSamples, kFeatures);
  const int host_threads = blas_thread_count();
  const SpreadThresholdForTests spread(0.0);  // this small shape runs on the whole team too
  set_blas_thread_count(threads);
  const double sum = backend.channel_softmax_cross_entropy(kChannels, logits, target, 0.25f, grad);
  set_blas_thread_count(host_threads);
  return {sum, grad.to_vector()};
}

TEST(CpuChannelCrossEntropy, IsTheDoubleFormulaAtEveryPoint) {
  const Result r = run(1);
  const Tensor logits = random_tensor(kSamples, kFeatures, 1), target = targets();
  double expected_sum = 0.0;
  for (int64_t n = 0; n < kSamples; ++n) {
    for (int64_t p = 0; p < kPoints; ++p) {
      double norm = 0.0;
      for (int64_t c = 0; c < kChannels; ++c) norm += std::exp(static_cast<double>(logits.at(n, c * kPoints + p)));
      for (int64_t c = 0; c < kChannels; ++c) {
        const int64_t i = c * kPoints + p;
        const double softmax = std::exp(static_cast<double>(logits.at(n, i))) / norm;
        expected_sum -= target.at(n, i) * std::log(softmax);
        EXPECT_NEAR(r.grad[n * kFeatures + i], 0.25 * (softmax - target.at(n, i)), 1e-6) << n << " " << p << " " << c;
      }
    }
  }
  EXPECT_NEAR(r.sum, expected_sum, 1e-9 * std::fabs(expected_sum));
}

TEST(CpuChannelCrossEntropy, TheBitsDoNotDependOnTheThreadCount) {
  const Result one = run(1);
  for (int threads : {2, 3}) {
    const Result many = run(threads);
    EXPECT_EQ(many.sum, one.sum) << threads << " threads";
    EXPECT_EQ(many.grad, one.grad) << threads << " threads";
  }
}

TEST(CpuChannelCrossEntropy, HugeLogitsStayFinite) {
  Backend& backend = cpu_backend();
  // One point, two channels: logits (1000, 0), class 1: loss 1000.
  const Tensor logits = Tensor::host_from(1, 2, {1000.0f, 0.0f}), target = Tensor::host_from(1, 2, {0.0f, 1.0f});
  Tensor grad = backend.zeros(1, 2);
  EXPECT_NEAR(backend.channel_softmax_cross_entropy(2, logits, target, 1.0f, grad), 1000.0, 1e-3);
  EXPECT_EQ(grad.to_vector(), (std::vector<float>{1.0f, -1.0f}));
}

TEST(CpuChannelCrossEntropy, ChannelsThatDoNotDivideTheWidthAreRefused) {
  Backend& backend = cpu_backend();
  const Tensor logits = backend.zeros(2, 6);
  Tensor grad = backend.zeros(2, 6);
  for (int64_t channels : {0, 4}) {
    try {
      backend.channel_softmax_cross_entropy(channels, logits, logits, 1.0f, grad);
      FAIL() << "expected an error for " << channels << " channels";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("channel_softmax_cross_entropy"), std::string::npos) << e.what();
    }
  }
  Tensor narrow = backend.zeros(2, 3);
  EXPECT_THROW(backend.channel_softmax_cross_entropy(3, logits, logits, 1.0f, narrow), Error);
}

}  // namespace
}  // namespace sluice::kernels
