// sluice_evaluate on 4 ranks (2 stages x 2 replicas, AdamW, optimizer.accumulate: 2): the validation loss equals
// the loss sluice_train_step then reports for the same samples (computed before its update), and training is
// unaffected: a trainer that evaluates between (and inside) accumulation windows ends bitwise where one that never
// evaluates ends; an uneven batch is cut as train_step cuts it. Misuse is refused on every rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <string>
#include <vector>

#include <sluice/sluice.h>

#include "tests/capi/run_test_support.h"

namespace {

using sluice::testing::world_rank;

constexpr int kInputs = 3, kOutputs = 2, kBatch = 8;

// No dropout: evaluate and train_step then run the same forward pass.
const std::string kConfig =
    "model:\n  inputs: 3\n  layers:\n    - {type: linear, outputs: 8}\n    - {type: tanh}\n"
    "    - {type: linear, outputs: 2}\npipeline: {stages: 2, schedule: 1f1b, microbatches: 2}\n"
    "optimizer: {type: adamw, lr: 0.05, accumulate: 2}\ndata: {type: external, batch: 16}\nseed: 3\n";

struct Batch {
  std::vector<float> x = std::vector<float>(kBatch * kInputs), y = std::vector<float>(kBatch * kOutputs);
  explicit Batch(int k) {
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.3 * i + k));
    for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(std::cos(0.7 * i - k));
  }
};

sluice_trainer* started() { return sluice::testing::started_trainer(kConfig); }

std::vector<float> predict(sluice_trainer* t) {
  const Batch probe(99);
  std::vector<float> out(kBatch * kOutputs);
  EXPECT_EQ(sluice_predict(t, probe.x.data(), out.data(), kBatch), SLUICE_OK) << sluice_last_error();
  return out;
}

TEST(Evaluate, EqualsTheTrainStepLossAndLeavesTrainingAlone) {
  sluice_trainer* evaluating = started();
  sluice_trainer* plain = started();
  for (int call = 0; call < 5; ++call) {
    const Batch b(call);
    const std::vector<float> before = predict(evaluating);
    float validation = NAN;
    ASSERT_SLUICE_OK(sluice_evaluate(evaluating, b.x.data(), b.y.data(), kBatch, &validation));
    EXPECT_EQ(predict(evaluating), before) << "evaluate changed the parameters (call " << call << ")";
    sluice_stats stats = SLUICE_STATS_INIT;
    ASSERT_SLUICE_OK(sluice_trainer_stats(evaluating, &stats));
    EXPECT_EQ(stats.pending_calls, call % 2) << "evaluate moved the accumulation window";
    EXPECT_EQ(stats.steps, call / 2);

    float trained = NAN, reference = NAN;
    ASSERT_SLUICE_OK(sluice_train_step(evaluating, b.x.data(), b.y.data(), kBatch, &trained));
    ASSERT_SLUICE_OK(sluice_train_step(plain, b.x.data(), b.y.data(), kBatch, &reference));
    EXPECT_EQ(validation, trained) << "call " << call;
    EXPECT_EQ(trained, reference) << "call " << call;
  }
  EXPECT_EQ(predict(evaluating), predict(plain)) << "the evaluating trainer trained differently";
  sluice_trainer_destroy(plain);
  sluice_trainer_destroy(evaluating);
}

// Without a data section a call may pass any batch of at least one row per micro-batch; evaluate cuts an uneven
// batch into micro-batches as train_step does, so the losses stay equal bit for bit.
TEST(Evaluate, AnUnevenBatchEqualsTheTrainStepLoss) {
  std::string config = kConfig;
  const auto remove = [&config](const std::string& text, const std::string& with) {
    config.replace(config.find(text), text.size(), with);
  };
  remove("data: {type: external, batch: 16}\n", "");
  remove("accumulate: 2", "accumulate: 1");
  sluice_trainer* t = sluice::testing::started_trainer(config);
  for (int64_t rows : {7, 5, 2}) {
    const Batch b(static_cast<int>(rows));
    float validation = NAN, trained = NAN;
    ASSERT_SLUICE_OK(sluice_evaluate(t, b.x.data(), b.y.data(), rows, &validation));
    ASSERT_SLUICE_OK(sluice_train_step(t, b.x.data(), b.y.data(), rows, &trained));
    EXPECT_EQ(validation, trained) << rows << " rows per replica";
  }
  sluice_trainer_destroy(t);
}

TEST(Evaluate, MisuseFailsOnEveryRank) {
  sluice_trainer* t = nullptr;
  ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, kConfig.c_str(), &t));
  const Batch b(0);
  float loss = 0;
  EXPECT_EQ(sluice_evaluate(t, b.x.data(), b.y.data(), kBatch, &loss), SLUICE_ERROR_STATE);
  ASSERT_SLUICE_OK(sluice_trainer_start(t));
  EXPECT_EQ(sluice_evaluate(t, b.x.data(), b.y.data(), 1, &loss), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sluice_last_error()).find("batch of 1 rows on rank"), std::string::npos) << sluice_last_error();
  EXPECT_NE(std::string(sluice_last_error()).find("is smaller than pipeline.microbatches (2)"), std::string::npos)
      << sluice_last_error();
  // Rank 3 holds the last stage of replica 1 and passes no targets: every rank fails, naming it.
  const float* targets = world_rank() == 3 ? nullptr : b.y.data();
  EXPECT_EQ(sluice_evaluate(t, b.x.data(), targets, kBatch, &loss), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sluice_last_error()).find("rank 3 holds the last stage but targets is NULL"),
            std::string::npos)
      << sluice_last_error();
  // The trainer still works.
  ASSERT_SLUICE_OK(sluice_evaluate(t, b.x.data(), b.y.data(), kBatch, &loss));
  EXPECT_TRUE(std::isfinite(loss));
  sluice_trainer_destroy(t);
}

}  // namespace
