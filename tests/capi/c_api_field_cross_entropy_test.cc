// loss: cross_entropy on a field output through the C API (2 ranks, 2 pipeline stages): a per-point classifier
// learns (the loss falls), and targets that are not class probabilities at every point are refused by
// sluice_train_step and sluice_evaluate with INVALID_ARGUMENT naming the sample, the point and the channel, without
// changing the model.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <string>
#include <vector>

#include <sluice/sluice.h>

#include "tests/capi/run_test_support.h"

namespace {

constexpr int kChannels = 3, kY = 4, kX = 5, kPoints = kY * kX, kBatch = 4;
constexpr int kInputs = 2 * kPoints, kOutputs = kChannels * kPoints;

const std::string kConfig =
    "model:\n  inputs: [2, 4, 5]\n  layers:\n"
    "    - {type: conv, channels: 8, kernel: 3, padding: periodic}\n    - {type: gelu}\n"
    "    - {type: conv, channels: 3, kernel: 1}\n"
    "pipeline: {stages: 2, microbatches: 2}\nloss: cross_entropy\n"
    "optimizer: {type: adamw, lr: 0.05}\ndata: {type: external, batch: 4}\nseed: 3\n";

// Inputs from k; at each point the class is which of three bands the first input channel falls in.
struct Batch {
  std::vector<float> x = std::vector<float>(kBatch * kInputs), y = std::vector<float>(kBatch * kOutputs, 0.0f);
  explicit Batch(int k) {
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.37 * i + 1.3 * k));
    for (int n = 0; n < kBatch; ++n) {
      for (int p = 0; p < kPoints; ++p) {
        const float v = x[n * kInputs + p];
        const int cls = v < -0.3f ? 0 : v < 0.3f ? 1 : 2;
        y[n * kOutputs + cls * kPoints + p] = 1.0f;
      }
    }
  }
};

std::vector<float> predict(sluice_trainer* t) {
  const Batch probe(99);
  std::vector<float> out(kBatch * kOutputs);
  EXPECT_EQ(sluice_predict(t, probe.x.data(), out.data(), kBatch), SLUICE_OK) << sluice_last_error();
  return out;
}

TEST(FieldCrossEntropy, APerPointClassifierLearns) {
  sluice_trainer* t = sluice::testing::started_trainer(kConfig);
  float first = 0.0f, last = 0.0f;
  for (int step = 0; step < 40; ++step) {
    const Batch b(step % 4);
    ASSERT_SLUICE_OK(sluice_train_step(t, b.x.data(), b.y.data(), kBatch, &last));
    if (step == 0) first = last;
  }
  // A uniform guess over 3 classes is ln 3 = 1.10 per point.
  EXPECT_NEAR(first, std::log(3.0), 0.5);
  EXPECT_LT(last, 0.5f * first) << "first " << first << ", last " << last;
  sluice_trainer_destroy(t);
}

void expect_refused(sluice_status status, const std::string& part) {
  EXPECT_EQ(status, SLUICE_ERROR_INVALID_ARGUMENT) << sluice_last_error();
  const std::string message = sluice_last_error();
  EXPECT_NE(message.find(part), std::string::npos) << message;
}

TEST(FieldCrossEntropy, TargetsThatAreNotClassProbabilitiesAreRefusedNamingSampleAndPoint) {
  sluice_trainer* t = sluice::testing::started_trainer(kConfig);
  const Batch good(0);
  ASSERT_SLUICE_OK(sluice_train_step(t, good.x.data(), good.y.data(), kBatch, nullptr));
  const std::vector<float> before = predict(t);
  // Sample 2, point (3, 4): the class number 2 in channel 0, as a label map would hold it.
  Batch label_map(1);
  const int p = 3 * kX + 4;
  for (int c = 0; c < kChannels; ++c) label_map.y[2 * kOutputs + c * kPoints + p] = 0.0f;
  label_map.y[2 * kOutputs + p] = 2.0f;
  const std::string where = "targets of sample 2 at point [3, 4] are not class probabilities over the 3 channels";
  expect_refused(sluice_train_step(t, label_map.x.data(), label_map.y.data(), kBatch, nullptr), where);
  expect_refused(sluice_train_step(t, label_map.x.data(), label_map.y.data(), kBatch, nullptr), "channel 0 holds 2");
  float loss = 0.0f;
  expect_refused(sluice_evaluate(t, label_map.x.data(), label_map.y.data(), kBatch, &loss), where);
  Batch with_nan(1);
  with_nan.y[1 * kOutputs + 2 * kPoints + 7] = std::nanf("");
  expect_refused(sluice_train_step(t, with_nan.x.data(), with_nan.y.data(), kBatch, nullptr),
                 "sample 1 at point [1, 2] are not class probabilities over the 3 channels (loss: cross_entropy): "
                 "channel 2 holds nan");
  // Nothing was applied, and the trainer goes on.
  EXPECT_EQ(predict(t), before);
  ASSERT_SLUICE_OK(sluice_train_step(t, good.x.data(), good.y.data(), kBatch, nullptr));
  EXPECT_NE(predict(t), before);
  sluice_trainer_destroy(t);
}

}  // namespace
