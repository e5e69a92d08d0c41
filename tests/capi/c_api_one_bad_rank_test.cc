// One rank gets it wrong, the others get it right: a bad argument, a missing custom layer or a bad config on a
// single rank must make the collective call fail on EVERY rank with the same status -- never leave the good ranks
// waiting in a collective the bad rank skipped. The bad rank's message names its problem, the others point at
// the rank that failed; afterwards the trainer is still usable (the next good call succeeds).
// Runs with 2 and 4 ranks, one pipeline stage per rank. A hang fails the test through Bazel's timeout.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include <sluice/sluice.h>

#include "tests/capi/misuse_test_support.h"

namespace {

using namespace capi_test;  // NOLINT: the shared rank helpers, sizes, scale layer and data of these tests

int last_rank() { return world_size() - 1; }

// One layer per stage and one stage per rank, so `first_layer` lives on rank 0 only.
std::string config_with(const std::string& first_layer, const std::string& extra = "") {
  std::string layers = "    - " + first_layer + "\n";
  std::string split = "1";
  for (int stage = 1; stage < world_size(); ++stage) {
    const int outputs = stage == world_size() - 1 ? kOutputs : kFeatures;
    layers += "    - {type: linear, outputs: " + std::to_string(outputs) + "}\n";
    split += ", 1";
  }
  return "model:\n"
         "  inputs: " + std::to_string(kFeatures) + "\n"
         "  layers:\n" + layers +
         "pipeline: {stages: " + std::to_string(world_size()) + ", schedule: 1f1b, microbatches: " +
         std::to_string(kMicrobatches) + ", split: [" + split + "]}\n"
         "optimizer: {type: sgd, lr: 0.1}\n"
         "data: {type: external, batch: " + std::to_string(kBatch) + "}\n" + extra;
}

const std::string kLinearLayer = "{type: linear, outputs: 4}";
const std::string kCustomLayer = "{type: custom, name: scale}";

#define ASSERT_SLUICE_OK(call) ASSERT_EQ((call), SLUICE_OK) << #call << ": " << sluice_last_error()

// The status every rank got, so a rank can also see that its peers agree with it.
std::vector<int> statuses_of_all_ranks(sluice_status mine) {
  const int local = static_cast<int>(mine);
  std::vector<int> all(world_size());
  MPI_Allgather(&local, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
  return all;
}

// Checks one collective call's outcome on this rank: the status (and that every rank got the same one), and
// the message -- `own_problem` on every rank, and on the others the bad rank's number.
void expect_failed_everywhere(sluice_status status, sluice_status expected, int bad_rank,
                              const std::string& own_problem) {
  const std::string message = sluice_last_error();
  EXPECT_EQ(status, expected) << "rank " << world_rank() << ": " << sluice_status_string(status) << ": " << message;
  for (int rank_status : statuses_of_all_ranks(status)) {
    EXPECT_EQ(rank_status, static_cast<int>(expected)) << "ranks disagree on the outcome";
  }
  EXPECT_NE(message.find(own_problem), std::string::npos)
      << "rank " << world_rank() << ": message \"" << message << "\" does not mention \"" << own_problem << "\"";
  if (world_rank() != bad_rank) {
    const std::string origin = "(on rank " + std::to_string(bad_rank);
    EXPECT_NE(message.find(origin), std::string::npos)
        << "rank " << world_rank() << ": message \"" << message << "\" does not name the bad rank: \"" << origin << "\"";
  }
}


int64_t steps_done(const sluice_trainer* trainer) {
  sluice_stats stats = SLUICE_STATS_INIT;
  EXPECT_EQ(sluice_trainer_stats(trainer, &stats), SLUICE_OK) << sluice_last_error();
  return stats.steps;
}

// A started trainer over a plain linear pipeline; each test breaks one argument on one rank.
class OneBadRankStep : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_GE(world_size(), 2) << "one-bad-rank cases need at least 2 ranks";
    ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, config_with(kLinearLayer).c_str(), &trainer_));
    ASSERT_SLUICE_OK(sluice_trainer_start(trainer_));
  }
  void TearDown() override { sluice_trainer_destroy(trainer_); }

  // The failed step must not have counted, and the next good step must work.
  void expect_next_step_works() {
    EXPECT_EQ(steps_done(trainer_), 0) << "a rejected step must not count";
    float loss = NAN;
    ASSERT_SLUICE_OK(sluice_train_step(trainer_, data_.inputs.data(), data_.targets.data(), kBatch, &loss));
    EXPECT_TRUE(std::isfinite(loss));
    EXPECT_EQ(steps_done(trainer_), 1);
  }

  sluice_trainer* trainer_ = nullptr;
  Data data_;
};

TEST_F(OneBadRankStep, BatchZeroOnTheLastRankOnly) {
  const int bad = last_rank();
  const int64_t batch = world_rank() == bad ? 0 : kBatch;
  const sluice_status status = sluice_train_step(trainer_, data_.inputs.data(), data_.targets.data(), batch, nullptr);
  expect_failed_everywhere(status, SLUICE_ERROR_INVALID_ARGUMENT, bad, "batch must be positive, got 0");
  expect_next_step_works();
}

TEST_F(OneBadRankStep, BatchZeroOnTheFirstRankOnly) {
  const int bad = 0;
  const int64_t batch = world_rank() == bad ? 0 : kBatch;
  const sluice_status status = sluice_train_step(trainer_, data_.inputs.data(), data_.targets.data(), batch, nullptr);
  expect_failed_everywhere(status, SLUICE_ERROR_INVALID_ARGUMENT, bad, "batch must be positive, got 0");
  expect_next_step_works();
}

TEST_F(OneBadRankStep, BatchTheScheduleCannotSplitOnOneRankOnly) {
  const int bad = 1;
  const int64_t batch = world_rank() == bad ? 3 : kBatch;  // 3 rows cannot fill 4 micro-batches
  const sluice_status status = sluice_train_step(trainer_, data_.inputs.data(), data_.targets.data(), batch, nullptr);
  expect_failed_everywhere(status, SLUICE_ERROR_INVALID_ARGUMENT, bad,
                           "batch of 3 rows on rank 1 is smaller than pipeline.microbatches (4)");
  expect_next_step_works();
}

TEST_F(OneBadRankStep, NullInputsOnTheFirstStageRankOnly) {
  const int bad = 0;  // the only rank that needs inputs; the others pass theirs anyway
  const float* inputs = world_rank() == bad ? nullptr : data_.inputs.data();
  const sluice_status status = sluice_train_step(trainer_, inputs, data_.targets.data(), kBatch, nullptr);
  expect_failed_everywhere(status, SLUICE_ERROR_INVALID_ARGUMENT, bad, "rank 0 holds the first stage but inputs is NULL");
  expect_next_step_works();
}

TEST_F(OneBadRankStep, NullTargetsOnTheLastStageRankOnly) {
  const int bad = last_rank();
  const float* targets = world_rank() == bad ? nullptr : data_.targets.data();
  const sluice_status status = sluice_train_step(trainer_, data_.inputs.data(), targets, kBatch, nullptr);
  expect_failed_everywhere(status, SLUICE_ERROR_INVALID_ARGUMENT, bad,
                           "rank " + std::to_string(bad) + " holds the last stage but targets is NULL");
  expect_next_step_works();
}

TEST_F(OneBadRankStep, DifferentBatchSizesOnTwoRanks) {
  // Each batch is valid on its own (a multiple of the micro-batches); only together are they wrong. Every rank
  // sees the same gathered sizes, so every rank names the problem itself.
  const int64_t batch = world_rank() == 1 ? kBatch / 2 : kBatch;
  const sluice_status status = sluice_train_step(trainer_, data_.inputs.data(), data_.targets.data(), batch, nullptr);
  const std::string message = sluice_last_error();
  EXPECT_EQ(status, SLUICE_ERROR_INVALID_ARGUMENT) << message;
  for (int rank_status : statuses_of_all_ranks(status)) EXPECT_EQ(rank_status, SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("ranks passed different batch sizes (rank 0: 8, rank 1: 4)"), std::string::npos) << message;
  expect_next_step_works();
}

TEST_F(OneBadRankStep, PredictWithNullOutputsOnOneRankOnly) {
  std::vector<float> before(kBatch * kOutputs, NAN), after(kBatch * kOutputs, NAN);
  ASSERT_SLUICE_OK(sluice_predict(trainer_, data_.inputs.data(), before.data(), kBatch));
  const int bad = 1;
  std::vector<float> outputs(kBatch * kOutputs);
  float* out = world_rank() == bad ? nullptr : outputs.data();
  const sluice_status status = sluice_predict(trainer_, data_.inputs.data(), out, kBatch);
  expect_failed_everywhere(status, SLUICE_ERROR_INVALID_ARGUMENT, bad, "outputs is NULL on rank 1");
  // Still usable, and the failed call changed nothing.
  ASSERT_SLUICE_OK(sluice_predict(trainer_, data_.inputs.data(), after.data(), kBatch));
  EXPECT_EQ(before, after);
  expect_next_step_works();
}

TEST_F(OneBadRankStep, PredictWithDifferentBatchSizes) {
  const int64_t batch = world_rank() == last_rank() ? kBatch / 2 : kBatch;
  std::vector<float> outputs(kBatch * kOutputs);
  const sluice_status status = sluice_predict(trainer_, data_.inputs.data(), outputs.data(), batch);
  EXPECT_EQ(status, SLUICE_ERROR_INVALID_ARGUMENT) << sluice_last_error();
  for (int rank_status : statuses_of_all_ranks(status)) EXPECT_EQ(rank_status, SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sluice_last_error()).find("different batch sizes"), std::string::npos) << sluice_last_error();
  ASSERT_SLUICE_OK(sluice_predict(trainer_, data_.inputs.data(), outputs.data(), kBatch));
}

// DISABLED: today these hang -- sluice_save_checkpoint / sluice_load_checkpoint check the path in capi/
// (sluice_api.cc) before the collective, so the bad rank returns and the others wait in the save for ever.
// Enable once the path check is agreed across ranks like the step arguments.
TEST_F(OneBadRankStep, SaveWithANullPathOnOneRankOnly) {
  const int bad = last_rank();
  const std::string file = std::string(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp") +
                           "/one_bad_rank_save.h5";
  const sluice_status status = sluice_save_checkpoint(trainer_, world_rank() == bad ? nullptr : file.c_str());
  expect_failed_everywhere(status, SLUICE_ERROR_INVALID_ARGUMENT, bad, "checkpoint path is NULL or empty");
  ASSERT_SLUICE_OK(sluice_save_checkpoint(trainer_, file.c_str()));
}

TEST_F(OneBadRankStep, LoadWithANullPathOnOneRankOnly) {
  const int bad = 0;
  const std::string file = std::string(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp") +
                           "/one_bad_rank_load.h5";
  ASSERT_SLUICE_OK(sluice_save_checkpoint(trainer_, file.c_str()));
  const sluice_status status = sluice_load_checkpoint(trainer_, world_rank() == bad ? nullptr : file.c_str());
  expect_failed_everywhere(status, SLUICE_ERROR_INVALID_ARGUMENT, bad, "checkpoint path is NULL or empty");
  ASSERT_SLUICE_OK(sluice_load_checkpoint(trainer_, file.c_str()));
}

// --- start and create ---------------------------------------------------------------------------------

class OneBadRankStart : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_GE(world_size(), 2) << "one-bad-rank cases need at least 2 ranks"; }
  void TearDown() override { sluice_trainer_destroy(trainer_); }
  sluice_trainer* trainer_ = nullptr;
};

// Every rank builds every layer's shape, so a rank without the registration fails even where it does not own
// the layer; the rank that has it must fail too instead of waiting for the others in the pipeline set-up.
TEST_F(OneBadRankStart, CustomLayerRegisteredOnRankZeroOnly) {
  ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, config_with(kCustomLayer).c_str(), &trainer_));
  const sluice_layer_ops ops = scale_ops();
  if (world_rank() == 0) {
    ASSERT_SLUICE_OK(sluice_trainer_register_layer(trainer_, "scale", &ops, nullptr));
  }
  const sluice_status status = sluice_trainer_start(trainer_);
  const std::string message = sluice_last_error();
  EXPECT_EQ(status, SLUICE_ERROR_CONFIG) << message;
  for (int rank_status : statuses_of_all_ranks(status)) EXPECT_EQ(rank_status, SLUICE_ERROR_CONFIG);
  // Every rank reports the first failing rank's problem (rank 1 lacks 'scale'); rank 0 names that rank.
  EXPECT_NE(message.find("scale"), std::string::npos) << "rank " << world_rank() << ": " << message;
  if (world_rank() == 0) {
    EXPECT_NE(message.find("(on rank 1"), std::string::npos) << message;
  }

  // A failed start leaves a trainer that can still be started once every rank has registered the layer.
  if (world_rank() != 0) {
    ASSERT_SLUICE_OK(sluice_trainer_register_layer(trainer_, "scale", &ops, nullptr));
  }
  ASSERT_SLUICE_OK(sluice_trainer_start(trainer_));
  Data data;
  float loss = NAN;
  ASSERT_SLUICE_OK(sluice_train_step(trainer_, data.inputs.data(), data.targets.data(), kBatch, &loss));
  EXPECT_TRUE(std::isfinite(loss));
}

TEST_F(OneBadRankStart, CustomLayerMissingOnlyOnTheRankThatOwnsIt) {
  ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, config_with(kCustomLayer).c_str(), &trainer_));
  const sluice_layer_ops ops = scale_ops();
  if (world_rank() != 0) {
    ASSERT_SLUICE_OK(sluice_trainer_register_layer(trainer_, "scale", &ops, nullptr));
  }
  expect_failed_everywhere(sluice_trainer_start(trainer_), SLUICE_ERROR_CONFIG, 0, "scale");
}

TEST_F(OneBadRankStart, UnavailableDeviceOnOneRankOnly) {
  const int bad = last_rank();
  const std::string device = world_rank() == bad ? "device: cuda\n" : "";
  ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, config_with(kLinearLayer, device).c_str(), &trainer_));
  const sluice_status status = sluice_trainer_start(trainer_);
  const std::vector<int> all = statuses_of_all_ranks(status);
  if (all[bad] == SLUICE_OK) GTEST_SKIP() << "this build has a usable CUDA device";
  for (int rank_status : all) EXPECT_EQ(rank_status, all[bad]) << "ranks disagree on the outcome";
  if (world_rank() == bad) {
    EXPECT_NE(std::string(sluice_last_error()).find("cuda"), std::string::npos) << sluice_last_error();
  }
}

TEST_F(OneBadRankStart, CreateWithABadConfigOnOneRankOnly) {
  const int bad = last_rank();
  const std::string config = world_rank() == bad ? "model: [1, 2" : config_with(kLinearLayer);
  const sluice_status status = sluice_trainer_create(MPI_COMM_WORLD, config.c_str(), &trainer_);
  const std::string message = sluice_last_error();
  EXPECT_EQ(status, SLUICE_ERROR_CONFIG) << message;
  for (int rank_status : statuses_of_all_ranks(status)) EXPECT_EQ(rank_status, SLUICE_ERROR_CONFIG);
  EXPECT_EQ(trainer_, nullptr) << "a failed create must not hand out a trainer";
  if (world_rank() != bad) {
    EXPECT_NE(message.find("(on rank " + std::to_string(bad)), std::string::npos) << message;
  }

  // Nothing was left half-created: a good create right after works.
  ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, config_with(kLinearLayer).c_str(), &trainer_));
  ASSERT_SLUICE_OK(sluice_trainer_start(trainer_));
}

}  // namespace
