// Losses: values worked out by hand, and the property the pipeline relies on: summing micro-batch gradients
// (of any sizes) gives the full-batch mean gradient.
#include "core/model/loss.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/common/error.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/model/test_support.h"

namespace sluice::model {
namespace {

using kernels::Tensor;

Tensor rows_of(const Tensor& full, int64_t first, int64_t count) {
  std::vector<float> values(full.data() + first * full.cols(), full.data() + (first + count) * full.cols());
  return Tensor::host_from(count, full.cols(), values);
}

TEST(MseLoss, HandComputedMicrobatchOfAGlobalBatchOfFour) {
  // Samples: (1-0)^2+(2-2)^2 = 1 -> 0.5 per feature mean; (3-3)^2+(4-2)^2 = 4 -> 2.
  const Tensor output = Tensor::host_from(2, 2, {1, 2, 3, 4});
  const Tensor target = Tensor::host_from(2, 2, {0, 2, 3, 2});
  const LossResult result = compute_loss(kernels::cpu_backend(), LossKind::kMse, output, target, 4);
  EXPECT_DOUBLE_EQ(result.sum, 2.5);
  // dL/dy = 2 (y - t) / (global batch 4 * 2 features)
  EXPECT_EQ(result.grad.to_vector(), (std::vector<float>{0.25f, 0.0f, 0.0f, 0.5f}));
}

TEST(CrossEntropyLoss, HandComputedOneHotAndSoftTargets) {
  // softmax(0, ln 3) = (1/4, 3/4). One-hot class 0: -ln(1/4). Soft (1/2, 1/2): -(ln(1/4) + ln(3/4)) / 2.
  const float ln3 = static_cast<float>(std::log(3.0));
  const Tensor output = Tensor::host_from(2, 2, {0, ln3, 0, ln3});
  const Tensor target = Tensor::host_from(2, 2, {1, 0, 0.5f, 0.5f});
  const LossResult result = compute_loss(kernels::cpu_backend(), LossKind::kCrossEntropy, output, target, 2);
  EXPECT_NEAR(result.sum, std::log(4.0) - 0.5 * (std::log(0.25) + std::log(0.75)), 1e-6);
  EXPECT_NEAR(result.grad.at(0, 0), (0.25 - 1.0) / 2, 1e-6);
  EXPECT_NEAR(result.grad.at(0, 1), 0.75 / 2, 1e-6);
  EXPECT_NEAR(result.grad.at(1, 0), (0.25 - 0.5) / 2, 1e-6);
  EXPECT_NEAR(result.grad.at(1, 1), (0.75 - 0.5) / 2, 1e-6);
}

TEST(LossScaling, UnequalMicrobatchesSumToTheFullBatchMean) {
  for (LossKind kind : {LossKind::kMse, LossKind::kCrossEntropy}) {
    const Tensor output = testing::random_tensor(4, 3, 1);
    Tensor target = testing::random_tensor(4, 3, 2);
    if (kind == LossKind::kCrossEntropy) {  // rows must be distributions
      for (int64_t r = 0; r < 4; ++r) {
        float sum = 0.0f;
        for (int64_t c = 0; c < 3; ++c) sum += (target.at(r, c) = std::fabs(target.at(r, c)));
        for (int64_t c = 0; c < 3; ++c) target.at(r, c) /= sum;
      }
    }
    const LossResult whole = compute_loss(kernels::cpu_backend(), kind, output, target, 4);
    // Micro-batches of 3 and 1 samples: an average of their averages would weigh the single sample 3x.
    const LossResult first = compute_loss(kernels::cpu_backend(), kind, rows_of(output, 0, 3), rows_of(target, 0, 3), 4);
    const LossResult second = compute_loss(kernels::cpu_backend(), kind, rows_of(output, 3, 1), rows_of(target, 3, 1), 4);
    EXPECT_NEAR(first.sum + second.sum, whole.sum, 1e-9);
    for (int64_t c = 0; c < 3; ++c) {
      for (int64_t r = 0; r < 3; ++r) EXPECT_EQ(first.grad.at(r, c), whole.grad.at(r, c));
      EXPECT_EQ(second.grad.at(0, c), whole.grad.at(3, c));
    }
    // The gradient is that of the mean: a finite difference of (sum / 4) agrees with it.
    Tensor nudged = output;
    const float h = 1e-2f;
    nudged.at(2, 1) += h;
    const double plus = compute_loss(kernels::cpu_backend(), kind, nudged, target, 4).sum / 4;
    nudged.at(2, 1) -= 2 * h;
    const double minus = compute_loss(kernels::cpu_backend(), kind, nudged, target, 4).sum / 4;
    EXPECT_NEAR(whole.grad.at(2, 1), (plus - minus) / (2 * h), 1e-3);
  }
}

TEST(LossErrors, NamesTheProblem) {
  const Tensor output = Tensor::host(2, 3);
  try {
    compute_loss(kernels::cpu_backend(), LossKind::kMse, output, Tensor::host(2, 2), 2);
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("[2][2]"), std::string::npos) << error.what();
  }
  EXPECT_THROW(compute_loss(kernels::cpu_backend(), LossKind::kMse, output, output, 1), Error);
  EXPECT_EQ(parse_loss("cross_entropy"), LossKind::kCrossEntropy);
  try {
    parse_loss("hinge");
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kConfig);
    EXPECT_NE(std::string(error.what()).find("'hinge'"), std::string::npos);
  }
}

}  // namespace
}  // namespace sluice::model
