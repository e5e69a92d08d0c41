// Checkpoints through the C API: sluice_save_checkpoint / sluice_load_checkpoint are collective, a restarted
// trainer continues exactly like one that never stopped (losses and predictions bitwise equal), a checkpoint
// loads into another pipeline layout, and a corrupted or missing file gives SLUICE_ERROR_CHECKPOINT with a
// message naming it while the trainer stays usable. Run with 4 ranks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <sluice/sluice.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "tests/capi/run_test_support.h"

namespace {

constexpr int kInputs = 5;
constexpr int kOutputs = 3;
constexpr int kBatch = 16;

#define ASSERT_SLUICE_OK(call) ASSERT_EQ((call), SLUICE_OK) << #call << ": " << sluice_last_error()

std::string config(int stages, const std::string& schedule) {
  return "model:\n  inputs: " + std::to_string(kInputs) +
         "\n  layers:\n    - {type: linear, outputs: 12}\n    - {type: gelu}\n    - {type: dropout, p: 0.1}\n"
         "    - {type: linear, outputs: 12}\n    - {type: tanh}\n    - {type: linear, outputs: " +
         std::to_string(kOutputs) + "}\n" + "pipeline: {stages: " + std::to_string(stages) + ", schedule: " + schedule +
         ", microbatches: 4}\nloss: mse\noptimizer: {type: adamw, lr: 0.02}\n" +
         "data: {type: external, batch: " + std::to_string(kBatch) + "}\nseed: 5\n";
}

std::string shared_path(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

struct Data {
  std::vector<float> x = std::vector<float>(kBatch * kInputs), y = std::vector<float>(kBatch * kOutputs);
  explicit Data(int step) {
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.3 * i + step));
    for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(std::cos(0.7 * i - step));
  }
};

sluice_trainer* started(const std::string& yaml) { return sluice::testing::started_trainer(yaml); }

// Runs steps [from, to) and returns their losses followed by a prediction of step 0's inputs.
std::vector<float> run(sluice_trainer* t, int from, int to) {
  std::vector<float> out;
  for (int step = from; step < to; ++step) {
    Data d(step);
    float loss = NAN;
    EXPECT_EQ(sluice_train_step(t, d.x.data(), d.y.data(), kBatch, &loss), SLUICE_OK) << sluice_last_error();
    out.push_back(loss);
  }
  Data d(0);
  std::vector<float> prediction(kBatch * kOutputs);
  EXPECT_EQ(sluice_predict(t, d.x.data(), prediction.data(), kBatch), SLUICE_OK) << sluice_last_error();
  out.insert(out.end(), prediction.begin(), prediction.end());
  return out;
}

TEST(CApiCheckpoint, RestartedTrainerContinuesBitForBit) {
  const std::string yaml = config(4, "zb-h1");
  const std::string file = shared_path("capi_restart.h5");
  sluice_trainer* uninterrupted = started(yaml);
  std::vector<float> expected = run(uninterrupted, 0, 5);
  sluice_trainer_destroy(uninterrupted);

  sluice_trainer* first = started(yaml);
  std::vector<float> got = run(first, 0, 2);
  got.resize(2);  // keep the losses; the mid-run prediction is not part of the comparison
  ASSERT_SLUICE_OK(sluice_save_checkpoint(first, file.c_str()));
  sluice_trainer_destroy(first);

  sluice_trainer* second = started(yaml);
  ASSERT_SLUICE_OK(sluice_load_checkpoint(second, file.c_str()));
  sluice_stats stats = SLUICE_STATS_INIT;
  ASSERT_SLUICE_OK(sluice_trainer_stats(second, &stats));
  EXPECT_EQ(stats.steps, 2);
  const std::vector<float> rest = run(second, 2, 5);
  got.insert(got.end(), rest.begin(), rest.end());
  sluice_trainer_destroy(second);
  EXPECT_EQ(got, expected);
}

TEST(CApiCheckpoint, LoadsIntoAnotherLayout) {
  const std::string file = shared_path("capi_reshard.h5");
  sluice_trainer* saver = started(config(4, "1f1b"));
  run(saver, 0, 1);
  ASSERT_SLUICE_OK(sluice_save_checkpoint(saver, file.c_str()));
  sluice_trainer_destroy(saver);
  sluice_trainer* two_stages = started(config(2, "gpipe"));  // 2 stages x 2 replicas
  ASSERT_SLUICE_OK(sluice_load_checkpoint(two_stages, file.c_str()));
  const std::vector<float> after = run(two_stages, 1, 2);
  EXPECT_TRUE(std::isfinite(after[0]));
  sluice_trainer_destroy(two_stages);
}

TEST(CApiCheckpoint, BadFilesAreRefusedAndTheTrainerStaysUsable) {
  const std::string yaml = config(4, "1f1b");
  sluice_trainer* t = started(yaml);
  const std::string missing = shared_path("no_such_checkpoint.h5");
  EXPECT_EQ(sluice_load_checkpoint(t, missing.c_str()), SLUICE_ERROR_CHECKPOINT);
  EXPECT_NE(std::string(sluice_last_error()).find("no_such_checkpoint.h5"), std::string::npos) << sluice_last_error();

  const std::string garbage = shared_path("garbage.h5");
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::ofstream(garbage) << "this is not an HDF5 file";
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(sluice_load_checkpoint(t, garbage.c_str()), SLUICE_ERROR_CHECKPOINT);
  EXPECT_NE(std::string(sluice_last_error()).find("garbage.h5"), std::string::npos) << sluice_last_error();

  EXPECT_EQ(sluice_save_checkpoint(t, nullptr), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(sluice_load_checkpoint(nullptr, garbage.c_str()), SLUICE_ERROR_INVALID_ARGUMENT);
  const std::vector<float> after = run(t, 0, 1);  // still trains
  EXPECT_TRUE(std::isfinite(after[0]));
  sluice_trainer_destroy(t);
}

}  // namespace
