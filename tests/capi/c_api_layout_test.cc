// sluice_trainer_layout and sluice_trainer_batch_share on 4 ranks, 2 stages x 2 replicas: every rank learns its
// stage, replica, which arrays it must pass and its share of the batch; the shares feed a real train_step.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <sluice/sluice.h>

#include "tests/capi/run_test_support.h"

namespace {

using sluice::testing::world_rank;

constexpr int kInputs = 3, kOutputs = 2, kGlobalBatch = 16, kMicrobatches = 2;

std::string config(const std::string& pipeline) {
  return "model:\n  inputs: " + std::to_string(kInputs) + "\n  layers:\n    - {type: linear, outputs: 4}\n"
         "    - {type: tanh}\n    - {type: linear, outputs: 2}\n    - {type: linear, outputs: " +
         std::to_string(kOutputs) + "}\npipeline: {" + pipeline + ", microbatches: " + std::to_string(kMicrobatches) +
         "}\noptimizer: {type: sgd, lr: 0.1}\ndata: {type: external, batch: " + std::to_string(kGlobalBatch) + "}\n";
}

class Layout : public ::testing::Test {
 protected:
  void start(const std::string& pipeline) {
    ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, config(pipeline).c_str(), &t_));
    ASSERT_SLUICE_OK(sluice_trainer_start(t_));
  }
  void TearDown() override { sluice_trainer_destroy(t_); }
  sluice_trainer* t_ = nullptr;
};

TEST_F(Layout, TwoStagesTimesTwoReplicas) {
  ASSERT_EQ(sluice::testing::world_size(), 4) << "run with 4 ranks";
  start("stages: 2, schedule: 1f1b");
  sluice_layout layout = SLUICE_LAYOUT_INIT;
  ASSERT_SLUICE_OK(sluice_trainer_layout(t_, &layout));
  const int rank = world_rank();
  EXPECT_EQ(layout.struct_size, sizeof(sluice_layout));
  EXPECT_EQ(layout.rank, rank);
  EXPECT_EQ(layout.stage, rank % 2);
  EXPECT_EQ(layout.replica, rank / 2);
  EXPECT_EQ(layout.stages, 2);
  EXPECT_EQ(layout.replicas, 2);
  EXPECT_EQ(layout.needs_inputs, rank % 2 == 0 ? 1 : 0);
  EXPECT_EQ(layout.needs_targets, rank % 2 == 1 ? 1 : 0);
  EXPECT_EQ(layout.batch, kGlobalBatch / 2);
  EXPECT_EQ(layout.first_sample, (rank / 2) * (kGlobalBatch / 2));

  int64_t first = -1, count = -1;
  ASSERT_SLUICE_OK(sluice_trainer_batch_share(t_, 32, &first, &count));
  EXPECT_EQ(count, 16);
  EXPECT_EQ(first, (rank / 2) * 16);

  // The layout is enough to drive a step: each rank passes only the arrays it needs, of its replica's rows.
  std::vector<float> x(kGlobalBatch * kInputs), y(kGlobalBatch * kOutputs);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.3 * i));
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(std::cos(0.7 * i));
  const float* inputs = layout.needs_inputs ? x.data() + layout.first_sample * kInputs : nullptr;
  const float* targets = layout.needs_targets ? y.data() + layout.first_sample * kOutputs : nullptr;
  float loss = NAN;
  ASSERT_SLUICE_OK(sluice_train_step(t_, inputs, targets, layout.batch, &loss));
  EXPECT_TRUE(std::isfinite(loss));
}

// zb-v puts the first and the last stage on the same pipeline rank (the V): that rank needs both arrays.
TEST_F(Layout, ZeroBubbleVNeedsBothArraysOnStageZero) {
  start("stages: 2, schedule: zb-v, chunks: 2");
  sluice_layout layout = SLUICE_LAYOUT_INIT;
  ASSERT_SLUICE_OK(sluice_trainer_layout(t_, &layout));
  EXPECT_EQ(layout.needs_inputs, layout.stage == 0 ? 1 : 0);
  EXPECT_EQ(layout.needs_targets, layout.stage == 0 ? 1 : 0);
}

TEST_F(Layout, MisuseIsRefusedNamingTheProblem) {
  sluice_layout layout = SLUICE_LAYOUT_INIT;
  int64_t first = 0, count = 0;
  ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, config("stages: 2, schedule: 1f1b").c_str(), &t_));
  EXPECT_EQ(sluice_trainer_layout(t_, &layout), SLUICE_ERROR_STATE);
  EXPECT_EQ(sluice_trainer_batch_share(t_, 16, &first, &count), SLUICE_ERROR_STATE);
  ASSERT_SLUICE_OK(sluice_trainer_start(t_));
  EXPECT_EQ(sluice_trainer_layout(t_, nullptr), SLUICE_ERROR_INVALID_ARGUMENT);
  layout.struct_size = 0;
  EXPECT_EQ(sluice_trainer_layout(t_, &layout), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sluice_last_error()).find("sluice_layout::struct_size is 0"), std::string::npos);
  EXPECT_EQ(sluice_trainer_batch_share(t_, 7, &first, &count), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sluice_last_error()).find("global_batch 7 does not split into 2 equal replica batches of at "
                                                  "least pipeline.microbatches = 2 rows"),
            std::string::npos)
      << sluice_last_error();
  EXPECT_EQ(sluice_trainer_batch_share(t_, 2, &first, &count), SLUICE_ERROR_INVALID_ARGUMENT);  // 1 row per replica
  // A replica batch need not be a multiple of the micro-batches: 3 rows are micro-batches of 2 and 1.
  ASSERT_SLUICE_OK(sluice_trainer_batch_share(t_, 6, &first, &count));
  EXPECT_EQ(count, 3);
  EXPECT_EQ(sluice_trainer_batch_share(t_, 16, nullptr, &count), SLUICE_ERROR_INVALID_ARGUMENT);
}

// A domain split trains through the C API (tests/runtime:domain_trainer_test), but what it cannot run yet is
// refused at start on every rank, naming it: here loss: custom, whose host callback sees a whole sample.
TEST_F(Layout, ADomainSplitRefusesACustomLossAtStart) {
  const std::string text =
      "model:\n  inputs: [1, 8, 8]\n  layers:\n    - {type: conv, channels: 2, kernel: 3, padding: periodic}\n"
      "pipeline: {domain: [2, 2]}\noptimizer: {type: sgd, lr: 0.1}\ndata: {type: external}\n"
      "loss: custom\n";
  ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, text.c_str(), &t_));
  EXPECT_EQ(sluice_trainer_start(t_), SLUICE_ERROR_UNSUPPORTED);
  EXPECT_NE(std::string(sluice_last_error()).find("pipeline.domain [2, 2] (4 blocks) with loss: custom is not "
                                                  "supported"),
            std::string::npos)
      << sluice_last_error();
}

}  // namespace
