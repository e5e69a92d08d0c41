// sluice_set_learning_rate / sluice_get_learning_rate through the C API (2 ranks, 2 stages):
// - get follows optimizer.lr_schedule by optimizer step (step: halves every 2 steps), also with accumulate 2;
// - set overrides it, 0 returns to it; the override survives save + load into a fresh trainer;
// - the documented errors (STATE before start, INVALID_ARGUMENT for NULL, negative, NaN, and values that differ
//   across ranks, the last on every rank) leave the override unchanged.
#include <gtest/gtest.h>
#include <mpi.h>
#include <sluice/sluice.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/mpi_world.h"

#include "tests/capi/run_test_support.h"

namespace {

constexpr int kIn = 3, kOut = 2, kBatch = 4;
constexpr double kBase = 0.1, kGamma = 0.5;
constexpr int kStepSize = 2;

std::string config(int accumulate) {
  return "model:\n  inputs: 3\n  layers:\n    - {type: linear, outputs: 5}\n    - {type: linear, outputs: 2}\n"
         "pipeline: {stages: 2, schedule: 1f1b, microbatches: 2}\n"
         "optimizer: {type: sgd, lr: 0.1, accumulate: " + std::to_string(accumulate) +
         ", lr_schedule: {type: step, step_size: 2, gamma: 0.5}}\ndata: {type: external, batch: 4}\n";
}

sluice_trainer* started(int accumulate = 1) { return sluice::testing::started_trainer(config(accumulate)); }

void train(sluice_trainer* t, int calls) {
  std::vector<float> x(kBatch * kIn, 0.5f), y(kBatch * kOut, 0.25f);
  for (int i = 0; i < calls; ++i) ASSERT_EQ(sluice_train_step(t, x.data(), y.data(), kBatch, nullptr), SLUICE_OK);
}

double next_lr(const sluice_trainer* t) {
  double lr = -1.0;
  EXPECT_EQ(sluice_get_learning_rate(t, &lr), SLUICE_OK) << sluice_last_error();
  return lr;
}

// StepLR's closed form at `steps` optimizer steps done.
double step_lr(int steps) { return kBase * std::pow(kGamma, steps / kStepSize); }

TEST(CApiLearningRate, GetFollowsTheScheduleByOptimizerStep) {
  for (int accumulate : {1, 2}) {
    sluice_trainer* t = started(accumulate);
    for (int steps = 0; steps < 5; ++steps) {
      EXPECT_EQ(next_lr(t), step_lr(steps)) << "accumulate " << accumulate << ", steps " << steps;
      train(t, accumulate);
    }
    sluice_trainer_destroy(t);
  }
}

TEST(CApiLearningRate, OverrideReplacesTheScheduleAndIsCheckpointed) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string file = std::string(tmp ? tmp : "/tmp") + "/lr_override.h5";
  const double lr = 0.0375;
  sluice_trainer* t = started();
  train(t, 1);
  ASSERT_EQ(sluice_set_learning_rate(t, lr), SLUICE_OK) << sluice_last_error();
  train(t, 3);
  EXPECT_EQ(next_lr(t), lr);
  ASSERT_EQ(sluice_save_checkpoint(t, file.c_str()), SLUICE_OK) << sluice_last_error();

  sluice_trainer* resumed = started();
  EXPECT_EQ(next_lr(resumed), kBase);
  ASSERT_EQ(sluice_load_checkpoint(resumed, file.c_str()), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(next_lr(resumed), lr);
  ASSERT_EQ(sluice_set_learning_rate(resumed, 0.0), SLUICE_OK);  // back to the schedule, 4 steps done
  EXPECT_EQ(next_lr(resumed), step_lr(4));
  sluice_trainer_destroy(resumed);
  sluice_trainer_destroy(t);
}

TEST(CApiLearningRate, DocumentedErrors) {
  sluice_trainer* created = nullptr;
  ASSERT_EQ(sluice_trainer_create(MPI_COMM_WORLD, config(1).c_str(), &created), SLUICE_OK);
  EXPECT_EQ(sluice_set_learning_rate(created, 0.1), SLUICE_ERROR_STATE);
  double lr = 0;
  EXPECT_EQ(sluice_get_learning_rate(created, &lr), SLUICE_ERROR_STATE);
  sluice_trainer_destroy(created);

  sluice_trainer* t = started();
  EXPECT_EQ(sluice_get_learning_rate(t, nullptr), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sluice_last_error()).find("lr (double*) is NULL"), std::string::npos);
  EXPECT_EQ(sluice_set_learning_rate(t, -0.5), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(sluice_set_learning_rate(t, std::nan("")), SLUICE_ERROR_INVALID_ARGUMENT);
  // Only rank 1 passes a bad value: every rank fails, naming rank 1.
  EXPECT_EQ(sluice_set_learning_rate(t, sluice::testing::world_rank() == 1 ? INFINITY : 0.2),
            SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sluice_last_error()).find("rank 1"), std::string::npos) << sluice_last_error();
  EXPECT_EQ(sluice_set_learning_rate(t, 0.01 * (1 + sluice::testing::world_rank())), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sluice_last_error()).find("different learning rates"), std::string::npos);
  EXPECT_EQ(next_lr(t), kBase);  // no override was set by the refused calls
  train(t, 1);                   // and the trainer still trains
  sluice_trainer_destroy(t);
}

}  // namespace
