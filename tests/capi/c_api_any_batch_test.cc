// Issue 26 item 5 on 4 ranks (2 stages x 2 replicas, 4 micro-batches): under the C API a config needs no `data`
// section, and each sluice_train_step call's batch is its own, any b >= M. Uneven batches (7, 10, 13 rows per
// replica on 4 micro-batches) train bit for bit like the sequential reference, which cuts them by the same rule
// (core/runtime/microbatch_rows.h); dropout is keyed by the running sample count, which a checkpoint carries
// (/train/data_position), so a run resumed from it continues bit for bit too. Refused: b < M, ranks passing
// different batches, an accumulation window whose calls differ in batch (naming both).
#include <gtest/gtest.h>
#include <mpi.h>
#include <sluice/sluice.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/config/config_parser.h"
#include "core/data/synthetic_data.h"
#include "core/runtime/reference_checkpoint.h"
#include "core/runtime/sequential_reference.h"
#include "tests/capi/checkpoint_tensors.h"
#include "tests/capi/run_test_support.h"

namespace {

using sluice::testing::fresh_dir;
using sluice::testing::started_trainer;
using sluice::testing::world_rank;

constexpr int kReplicas = 2, kInputs = 5, kOutputs = 3;

// No data section. Dropout makes the result depend on each sample's global index.
std::string config(int accumulate = 1, int stages = 2) {
  return "model:\n  inputs: " + std::to_string(kInputs) +
         "\n  layers:\n    - {type: linear, outputs: 16}\n    - {type: gelu}\n    - {type: dropout, p: 0.25}\n"
         "    - {type: linear, outputs: 8}\n    - {type: tanh}\n    - {type: linear, outputs: " +
         std::to_string(kOutputs) +
         "}\npipeline: {stages: " + std::to_string(stages) + ", schedule: 1f1b, microbatches: 4}\n"
         "optimizer: {type: adamw, lr: 0.01, accumulate: " +
         std::to_string(accumulate) + "}\nseed: 11\n";
}

struct Batch {
  std::vector<float> inputs, targets;
};

// Call `call`'s global batch (all replicas, replica-major) of `global_rows` synthetic samples.
Batch global_batch(int call, int64_t global_rows) {
  sluice::data::SyntheticData source(11, kInputs, kOutputs, sluice::data::TargetKind::kRegression);
  Batch b;
  b.inputs.resize(global_rows * kInputs);
  b.targets.resize(global_rows * kOutputs);
  source.batch(call, 0, global_rows, b.inputs.data(), b.targets.data());
  return b;
}

int replica_of(sluice_trainer* t) {
  sluice_layout layout = SLUICE_LAYOUT_INIT;
  EXPECT_EQ(sluice_trainer_layout(t, &layout), SLUICE_OK) << sluice_last_error();
  return layout.replica;
}

// This replica's share of call `call` with `rows` rows per replica, through the API.
sluice_status train(sluice_trainer* t, int call, int64_t rows, float* loss) {
  const Batch b = global_batch(call, rows * kReplicas);
  const int64_t first = replica_of(t) * rows;
  return sluice_train_step(t, b.inputs.data() + first * kInputs, b.targets.data() + first * kOutputs, rows, loss);
}

void expect_same_parameters(sluice::runtime::SequentialReference& a, sluice::runtime::SequentialReference& b,
                            const std::string& what) {
  std::map<std::string, sluice::model::Parameter*> expected;
  for (sluice::model::Parameter* p : a.parameters()) expected[p->qualified_name()] = p;
  int compared = 0;
  for (sluice::model::Parameter* p : b.parameters()) {
    const sluice::model::Parameter* e = expected.at(p->qualified_name());
    ASSERT_EQ(p->value.size(), e->value.size());
    EXPECT_EQ(0, std::memcmp(p->value.data(), e->value.data(), p->value.bytes())) << p->qualified_name() << ": " << what;
    ++compared;
  }
  EXPECT_GT(compared, 0);
}

constexpr int64_t kBatches[] = {7, 10, 13};  // rows per replica: 4 micro-batches of 2,2,2,1 / 3,3,2,2 / 4,3,3,3

TEST(AnyBatch, UnevenBatchesWithoutADataSectionMatchTheSequentialRunAndSurviveACheckpoint) {
  ASSERT_EQ(sluice::testing::world_size(), 4) << "run with 4 ranks";
  const std::string dir = fresh_dir("any_batch");
  if (world_rank() == 0) std::filesystem::create_directories(dir);
  MPI_Barrier(MPI_COMM_WORLD);
  sluice_trainer* t = started_trainer(config());
  ASSERT_NE(t, nullptr);
  const sluice::config::Config cfg = sluice::config::parse_config(config());
  sluice::runtime::SequentialReference reference(cfg, kReplicas);
  int call = 0;
  for (int64_t rows : kBatches) {
    float loss = 0.0f;
    ASSERT_SLUICE_OK(train(t, call, rows, &loss));
    const Batch b = global_batch(call, rows * kReplicas);
    const double sequential = reference.train_step(b.inputs.data(), b.targets.data(), rows * kReplicas);
    EXPECT_EQ(loss, static_cast<float>(sequential)) << "call " << call << " with " << rows << " rows per replica";
    ++call;
  }
  const std::string saved = dir + "/after_three.h5";
  ASSERT_SLUICE_OK(sluice_save_checkpoint(t, saved.c_str()));

  // One more call of yet another size, on the running trainer, on a fresh trainer loaded from the checkpoint, and
  // on the sequential reference and a copy of it loaded from the same checkpoint.
  constexpr int64_t kLast = 9;
  ASSERT_SLUICE_OK(train(t, call, kLast, nullptr));
  const std::string continued = dir + "/continued.h5";
  ASSERT_SLUICE_OK(sluice_save_checkpoint(t, continued.c_str()));
  sluice_trainer* resumed = started_trainer(config());
  ASSERT_SLUICE_OK(sluice_load_checkpoint(resumed, saved.c_str()));
  ASSERT_SLUICE_OK(train(resumed, call, kLast, nullptr));
  const std::string resumed_file = dir + "/resumed.h5";
  ASSERT_SLUICE_OK(sluice_save_checkpoint(resumed, resumed_file.c_str()));

  if (world_rank() == 0) {
    // The pipelined run's parameters after the three uneven calls are the sequential run's, bit for bit.
    sluice::runtime::SequentialReference loaded(cfg, kReplicas);
    sluice::runtime::load_checkpoint(loaded, cfg, saved);
    expect_same_parameters(reference, loaded, "pipelined (7, 10, 13 rows) vs sequential");
    // The checkpoint's data position (2 x (7 + 10 + 13) = 60 samples, not 3 steps x 18) keys the next call's dropout.
    const Batch b = global_batch(call, kLast * kReplicas);
    reference.train_step(b.inputs.data(), b.targets.data(), kLast * kReplicas);
    loaded.train_step(b.inputs.data(), b.targets.data(), kLast * kReplicas);
    expect_same_parameters(reference, loaded, "sequential resumed from the checkpoint");
    sluice::runtime::SequentialReference pipelined_after(cfg, kReplicas);
    sluice::runtime::load_checkpoint(pipelined_after, cfg, continued);
    expect_same_parameters(reference, pipelined_after, "pipelined fourth call vs sequential");
    // The resumed trainer continued exactly where the running one went on (parameters and optimizer state).
    EXPECT_EQ(sluice::capi_test::read_checkpoint_tensors(continued),
              sluice::capi_test::read_checkpoint_tensors(resumed_file));
  }
  sluice_trainer_destroy(resumed);
  sluice_trainer_destroy(t);
}

TEST(AnyBatch, BatchSmallerThanTheMicrobatchesIsRefused) {
  sluice_trainer* t = started_trainer(config());
  EXPECT_EQ(train(t, 0, 3, nullptr), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sluice_last_error()).find("batch of 3 rows on rank"), std::string::npos) << sluice_last_error();
  EXPECT_NE(std::string(sluice_last_error()).find("is smaller than pipeline.microbatches (4)"), std::string::npos)
      << sluice_last_error();
  ASSERT_SLUICE_OK(train(t, 0, 4, nullptr));  // one row per micro-batch is enough
  sluice_trainer_destroy(t);
}

TEST(AnyBatch, ReplicasPassingDifferentBatchesAreRefused) {
  sluice_trainer* t = started_trainer(config());
  const int64_t rows = replica_of(t) == 0 ? 7 : 9;
  const Batch b = global_batch(0, 9 * kReplicas);
  EXPECT_EQ(sluice_train_step(t, b.inputs.data(), b.targets.data(), rows, nullptr), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sluice_last_error()).find("ranks passed different batch sizes"), std::string::npos)
      << sluice_last_error();
  ASSERT_SLUICE_OK(train(t, 0, 9, nullptr));  // the trainer stays usable
  sluice_trainer_destroy(t);
}

TEST(AnyBatch, AnAccumulationWindowKeepsOneBatch) {
  sluice_trainer* t = started_trainer(config(2));
  ASSERT_SLUICE_OK(train(t, 0, 7, nullptr));
  EXPECT_EQ(train(t, 1, 10, nullptr), SLUICE_ERROR_INVALID_ARGUMENT);
  const std::string message = sluice_last_error();
  EXPECT_NE(message.find("batch of 10 rows in call 2 of 2"), std::string::npos) << message;
  EXPECT_NE(message.find("whose calls pass 7 rows"), std::string::npos) << message;
  ASSERT_SLUICE_OK(train(t, 1, 7, nullptr));  // the window ends with its own batch
  ASSERT_SLUICE_OK(train(t, 2, 10, nullptr));  // and the next window may take another
  sluice_trainer_destroy(t);
}

// A checkpoint saved in the middle of a window keeps the window's batch: the rest of the window is checked against
// it after a restart, also under another replica count (where the same global batch is other rows per replica).
TEST(AnyBatch, AnAccumulationWindowKeepsItsBatchAcrossARestart) {
  const std::string dir = fresh_dir("window_restart");
  if (world_rank() == 0) std::filesystem::create_directories(dir);
  MPI_Barrier(MPI_COMM_WORLD);
  const std::string saved = dir + "/mid_window.h5";
  sluice_trainer* t = started_trainer(config(3));
  ASSERT_SLUICE_OK(train(t, 0, 7, nullptr));
  ASSERT_SLUICE_OK(sluice_save_checkpoint(t, saved.c_str()));
  sluice_trainer_destroy(t);

  sluice_trainer* resumed = started_trainer(config(3));
  ASSERT_SLUICE_OK(sluice_load_checkpoint(resumed, saved.c_str()));
  EXPECT_EQ(train(resumed, 1, 10, nullptr), SLUICE_ERROR_INVALID_ARGUMENT);
  std::string message = sluice_last_error();
  EXPECT_NE(message.find("batch of 10 rows in call 2 of 3"), std::string::npos) << message;
  EXPECT_NE(message.find("whose calls pass 7 rows"), std::string::npos) << message;
  ASSERT_SLUICE_OK(train(resumed, 1, 7, nullptr));
  sluice_trainer_destroy(resumed);

  // 4 stages x 1 replica: the window's 14 samples per call are 14 rows on the one replica.
  sluice_trainer* regrouped = started_trainer(config(3, 4));
  ASSERT_SLUICE_OK(sluice_load_checkpoint(regrouped, saved.c_str()));
  EXPECT_EQ(train(regrouped, 1, 7, nullptr), SLUICE_ERROR_INVALID_ARGUMENT);
  message = sluice_last_error();
  EXPECT_NE(message.find("whose calls pass 14 rows"), std::string::npos) << message;
  ASSERT_SLUICE_OK(train(regrouped, 1, 14, nullptr));
  ASSERT_SLUICE_OK(train(regrouped, 2, 14, nullptr));  // the window's last call
  ASSERT_SLUICE_OK(train(regrouped, 3, 9, nullptr));   // a new window takes any batch
  sluice_trainer_destroy(regrouped);
}

}  // namespace
