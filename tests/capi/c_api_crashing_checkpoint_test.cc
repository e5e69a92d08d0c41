// A checkpoint file that crashes libhdf5 1.10.8 itself (tests/fuzz/hdf5_crashes, $SLUICE_TEST_CRASHING_FILE)
// through the C API: the checkpoint probe (checkpoint/isolated_read.h, $SLUICE_CHECKPOINT_PROBE) reads it in a
// separate process first, so sluice_load_checkpoint and sluice_model_load return SLUICE_ERROR_CHECKPOINT naming the
// file and the crash instead of the host dying by SIGSEGV (as it did before the probe), sluice_trainer_resume of a
// directory whose newest file is that one resumes from the older valid checkpoint, and
// checkpoint.isolated_reads: always without a probe is a CONFIG error. Run with 2 and 3 ranks (one pipeline stage per
// rank): only rank 0 runs the probe, every rank must return its verdict.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <sluice/sluice.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/capi/run_test_support.h"

namespace {

using ::testing::HasSubstr;

constexpr int kInputs = 4;
constexpr int kOutputs = 2;
constexpr int kBatch = 8;

int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// One stage per rank.
std::string config(const std::string& extra) {
  return "model:\n  inputs: " + std::to_string(kInputs) +
         "\n  layers:\n    - {type: linear, outputs: 8}\n    - {type: tanh}\n    - {type: linear, outputs: 8}\n"
         "    - {type: tanh}\n    - {type: linear, outputs: " + std::to_string(kOutputs) +
         "}\npipeline: {stages: " + std::to_string(world_size()) +
         ", schedule: 1f1b, microbatches: 2}\nloss: mse\noptimizer: {type: sgd, lr: 0.1}\n"
         "data: {type: external, batch: " + std::to_string(kBatch) + "}\nseed: 3\n" + extra;
}

std::string crashing_file() {
  const char* file = std::getenv("SLUICE_TEST_CRASHING_FILE");
  EXPECT_NE(file, nullptr) << "SLUICE_TEST_CRASHING_FILE is not set";
  return file ? std::filesystem::absolute(file).string() : "";
}

std::string shared_path(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

int rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

sluice_trainer* started(const std::string& yaml) { return sluice::testing::started_trainer(yaml); }

void train(sluice_trainer* t, int steps) {
  std::vector<float> x(kBatch * kInputs), y(kBatch * kOutputs);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.1 * i));
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(std::cos(0.2 * i));
  for (int i = 0; i < steps; ++i) {
    float loss = NAN;
    ASSERT_EQ(sluice_train_step(t, x.data(), y.data(), kBatch, &loss), SLUICE_OK) << sluice_last_error();
  }
}

void expect_crash_reported(const std::string& message, const std::string& file) {
  EXPECT_THAT(message, HasSubstr(file + ": the HDF5 library crashed (signal 11"));
  EXPECT_THAT(message, HasSubstr("the file is corrupt or not a Sluice checkpoint"));
}

TEST(CApiCrashingCheckpoint, LoadCheckpointReturnsAnErrorAndTheTrainerStaysUsable) {
  const std::string file = crashing_file();
  sluice_trainer* t = started(config(""));
  EXPECT_EQ(sluice_load_checkpoint(t, file.c_str()), SLUICE_ERROR_CHECKPOINT);
  expect_crash_reported(sluice_last_error(), file);  // on every rank: the verdict is agreed
  train(t, 1);
  sluice_trainer_destroy(t);
}

TEST(CApiCrashingCheckpoint, ResumeFromDirectoryFallsBackToTheOlderValidCheckpoint) {
  const std::string dir = shared_path("crashing_newest_np" + std::to_string(world_size()));
  sluice_trainer* first = started(config(""));
  train(first, 2);
  if (rank() == 0) std::filesystem::create_directories(dir);
  MPI_Barrier(MPI_COMM_WORLD);
  ASSERT_EQ(sluice_save_checkpoint(first, (dir + "/ckpt_00000002.h5").c_str()), SLUICE_OK) << sluice_last_error();
  sluice_trainer_destroy(first);
  if (rank() == 0) std::filesystem::copy_file(crashing_file(), dir + "/ckpt_00000009.h5");
  MPI_Barrier(MPI_COMM_WORLD);

  sluice_trainer* resumed = started(config(""));
  int64_t step = -1;
  ASSERT_EQ(sluice_trainer_resume(resumed, dir.c_str(), &step), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(step, 2);
  train(resumed, 1);
  sluice_trainer_destroy(resumed);
}

TEST(CApiCrashingCheckpoint, ModelLoadReturnsAnError) {
  const std::string file = crashing_file();
  sluice_model* m = nullptr;
  EXPECT_EQ(sluice_model_load(file.c_str(), &m), SLUICE_ERROR_CHECKPOINT);
  EXPECT_EQ(m, nullptr);
  expect_crash_reported(sluice_last_error(), file);
  ASSERT_EQ(sluice_model_create(&m), SLUICE_OK);
  EXPECT_EQ(sluice_model_load_checkpoint(m, file.c_str()), SLUICE_ERROR_CHECKPOINT);
  expect_crash_reported(sluice_last_error(), file);
  sluice_model_destroy(m);
}

TEST(CApiCrashingCheckpoint, AlwaysWithoutAProbeIsAConfigError) {
  const std::string saved = std::getenv("SLUICE_CHECKPOINT_PROBE") ? std::getenv("SLUICE_CHECKPOINT_PROBE") : "";
  unsetenv("SLUICE_CHECKPOINT_PROBE");  // and no probe beside this test binary: none is found
  sluice_trainer* t = started(config("checkpoint: {isolated_reads: always}\n"));
  EXPECT_EQ(sluice_load_checkpoint(t, crashing_file().c_str()), SLUICE_ERROR_CONFIG);
  EXPECT_THAT(sluice_last_error(), HasSubstr("checkpoint.isolated_reads is always but the checkpoint probe "
                                             "sluice-checkpoint-probe was not found"));
  EXPECT_THAT(sluice_last_error(), HasSubstr("SLUICE_CHECKPOINT_PROBE"));
  sluice_trainer_destroy(t);
  if (!saved.empty()) setenv("SLUICE_CHECKPOINT_PROBE", saved.c_str(), 1);
}

}  // namespace
