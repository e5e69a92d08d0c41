// The application's own time loop through the C API, with the library's run control (core/runtime/training_loop.h,
// the same code as `sluice train`): periodic checkpoints every/keep from sluice_train_step, sluice_trainer_resume
// (fresh start on an empty or missing directory, the saved step otherwise, and a resumed run that ends bitwise
// equal to an uninterrupted one), the agreed preemption stop after a signal on ONE rank, and the keys the API
// refuses rather than ignores (data.type synthetic/hdf5, training past `steps`). A directory's latest checkpoint
// that fails verification is skipped with a warning and the older one resumes exactly; a directory of corrupt ones
// is an error naming each. Run with 2 ranks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <sluice/sluice.h>

#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <hdf5.h>

#include "core/runtime/preemption.h"
#include "tests/capi/run_test_support.h"

namespace {

namespace fs = std::filesystem;

constexpr int kInputs = 5;
constexpr int kOutputs = 3;
constexpr int kBatch = 8;

using sluice::testing::fresh_dir;
using sluice::testing::world_rank;

// Two stages, AdamW and dropout: a resume must bring back moments, step count and the dropout stream.
std::string config(const std::string& extra) {
  return "model:\n  inputs: " + std::to_string(kInputs) +
         "\n  layers:\n    - {type: linear, outputs: 8}\n    - {type: dropout, p: 0.1}\n    - {type: tanh}\n"
         "    - {type: linear, outputs: " +
         std::to_string(kOutputs) + "}\npipeline: {stages: 2, schedule: 1f1b, microbatches: 2}\n" +
         "optimizer: {type: adamw, lr: 0.02}\ndata: {type: external, batch: " + std::to_string(kBatch) +
         "}\nseed: 7\n" + extra;
}

std::string checkpoint_config(const std::string& dir, int every, int keep) {
  return config("checkpoint: {dir: " + dir + ", every: " + std::to_string(every) + ", keep: " + std::to_string(keep) +
                "}\n");
}

struct Data {
  std::vector<float> x = std::vector<float>(kBatch * kInputs), y = std::vector<float>(kBatch * kOutputs);
  explicit Data(int step) {
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.3 * i + step));
    for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(std::cos(0.7 * i - step));
  }
};

sluice_trainer* started(const std::string& yaml) { return sluice::testing::started_trainer(yaml); }

// Steps [from, to): their losses.
std::vector<float> train(sluice_trainer* t, int from, int to) {
  std::vector<float> losses;
  for (int step = from; step < to; ++step) {
    Data d(step);
    float loss = NAN;
    EXPECT_EQ(sluice_train_step(t, d.x.data(), d.y.data(), kBatch, &loss), SLUICE_OK) << sluice_last_error();
    losses.push_back(loss);
  }
  return losses;
}

std::vector<float> predict(sluice_trainer* t) {
  Data d(0);
  std::vector<float> out(kBatch * kOutputs);
  EXPECT_EQ(sluice_predict(t, d.x.data(), out.data(), kBatch), SLUICE_OK) << sluice_last_error();
  return out;
}

// The directory's files but its lock (.sluice.lock, held while a trainer with checkpoint.dir is alive).
std::set<std::string> files_in(const std::string& dir) {
  std::set<std::string> names;
  if (!fs::is_directory(dir)) return names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename() != ".sluice.lock") names.insert(entry.path().filename().string());
  }
  return names;
}

TEST(CApiRunControl, PeriodicCheckpointsHonourEveryAndKeep) {
  const std::string dir = fresh_dir("periodic");
  sluice_trainer* t = started(checkpoint_config(dir, 2, 2));
  train(t, 0, 3);
  EXPECT_EQ(files_in(dir), (std::set<std::string>{"ckpt_00000002.h5"}));
  train(t, 3, 7);  // checkpoints at 4 and 6; keep 2 deletes 2
  EXPECT_EQ(files_in(dir), (std::set<std::string>{"ckpt_00000004.h5", "ckpt_00000006.h5"}));
  sluice_trainer_destroy(t);
}

TEST(CApiRunControl, StepsIsTheLastStepAndItsCheckpointIsWritten) {
  const std::string dir = fresh_dir("last_step");
  sluice_trainer* t = started(config("steps: 3\ncheckpoint: {dir: " + dir + ", every: 2}\n"));
  train(t, 0, 3);
  EXPECT_EQ(files_in(dir), (std::set<std::string>{"ckpt_00000002.h5", "ckpt_00000003.h5"}));
  Data d(3);
  EXPECT_EQ(sluice_train_step(t, d.x.data(), d.y.data(), kBatch, nullptr), SLUICE_ERROR_STATE);
  EXPECT_NE(std::string(sluice_last_error()).find("steps"), std::string::npos) << sluice_last_error();
  sluice_stats stats = SLUICE_STATS_INIT;
  ASSERT_SLUICE_OK(sluice_trainer_stats(t, &stats));
  EXPECT_EQ(stats.steps, 3);
  sluice_trainer_destroy(t);
}

TEST(CApiRunControl, ResumeStartsFreshOnAnEmptyOrMissingDirectory) {
  const std::string dir = fresh_dir("empty");
  if (world_rank() == 0) fs::create_directories(dir);
  MPI_Barrier(MPI_COMM_WORLD);
  sluice_trainer* t = started(checkpoint_config(dir, 1, 1));
  int64_t step = -1;
  ASSERT_SLUICE_OK(sluice_trainer_resume(t, nullptr, &step));
  EXPECT_EQ(step, 0);
  step = -1;
  const std::string missing = dir + "/not/yet";
  ASSERT_SLUICE_OK(sluice_trainer_resume(t, missing.c_str(), &step));
  EXPECT_EQ(step, 0);
  // A file that is not there is an error naming it, not a fresh start.
  const std::string file = dir + "/ckpt_00000009.h5";
  EXPECT_EQ(sluice_trainer_resume(t, file.c_str(), &step), SLUICE_ERROR_CHECKPOINT);
  EXPECT_NE(std::string(sluice_last_error()).find("ckpt_00000009.h5"), std::string::npos) << sluice_last_error();
  EXPECT_EQ(sluice_trainer_resume(t, dir.c_str(), nullptr), SLUICE_ERROR_INVALID_ARGUMENT);
  sluice_trainer_destroy(t);

  sluice_trainer* no_dir = started(config(""));
  EXPECT_EQ(sluice_trainer_resume(no_dir, nullptr, &step), SLUICE_ERROR_CONFIG);
  EXPECT_NE(std::string(sluice_last_error()).find("checkpoint.dir"), std::string::npos) << sluice_last_error();
  sluice_trainer_destroy(no_dir);
}

TEST(CApiRunControl, ResumedRunEndsBitwiseEqualToAnUninterruptedOne) {
  const std::string dir = fresh_dir("resume");
  sluice_trainer* uninterrupted = started(config(""));
  std::vector<float> expected = train(uninterrupted, 0, 7);
  const std::vector<float> expected_prediction = predict(uninterrupted);
  sluice_trainer_destroy(uninterrupted);

  // The first job checkpoints every 3 steps and dies after step 4 (step 4 is lost and redone).
  sluice_trainer* first = started(checkpoint_config(dir, 3, 2));
  int64_t step = -1;
  ASSERT_SLUICE_OK(sluice_trainer_resume(first, nullptr, &step));
  ASSERT_EQ(step, 0);
  std::vector<float> got = train(first, 0, 4);
  sluice_trainer_destroy(first);
  got.resize(3);

  sluice_trainer* second = started(checkpoint_config(dir, 3, 2));
  ASSERT_SLUICE_OK(sluice_trainer_resume(second, nullptr, &step));
  ASSERT_EQ(step, 3);
  const std::vector<float> rest = train(second, static_cast<int>(step), 7);
  got.insert(got.end(), rest.begin(), rest.end());
  EXPECT_EQ(got, expected);
  EXPECT_EQ(predict(second), expected_prediction);
  sluice_trainer_destroy(second);

  // The file itself resumes too.
  sluice_trainer* from_file = started(config(""));
  const std::string file = dir + "/ckpt_00000003.h5";
  ASSERT_SLUICE_OK(sluice_trainer_resume(from_file, file.c_str(), &step));
  EXPECT_EQ(step, 3);
  sluice_trainer_destroy(from_file);
}

// Flips one bit inside the stored data of `dataset` (found through HDF5, independently of the reader under test),
// on rank 0: the file still opens, only its checksum no longer matches.
void flip_a_data_byte(const std::string& file, const std::string& dataset) {
  if (world_rank() == 0) {
    const hid_t handle = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    const hid_t data = H5Dopen2(handle, dataset.c_str(), H5P_DEFAULT);
    const haddr_t offset = H5Dget_offset(data);
    H5Dclose(data);
    H5Fclose(handle);
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(offset) + 2);
    const char byte = static_cast<char>(f.get());
    f.seekp(static_cast<std::streamoff>(offset) + 2);
    f.put(static_cast<char>(byte ^ 0x10));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Checkpoints of steps 1..3 in `dir` (keep 3), from the same run.
void three_checkpoints(const std::string& dir) {
  sluice_trainer* t = started(checkpoint_config(dir, 1, 3));
  train(t, 0, 3);
  sluice_trainer_destroy(t);
}

TEST(CApiRunControl, ACorruptLatestCheckpointIsSkippedWithAWarning) {
  const std::string dir = fresh_dir("corrupt_latest");
  three_checkpoints(dir);
  // What the run must equal: resumed from the step-2 file by name.
  sluice_trainer* reference = started(config(""));
  int64_t step = -1;
  const std::string older = dir + "/ckpt_00000002.h5";
  ASSERT_SLUICE_OK(sluice_trainer_resume(reference, older.c_str(), &step));
  const std::vector<float> expected = train(reference, 2, 5);
  const std::vector<float> expected_prediction = predict(reference);
  sluice_trainer_destroy(reference);

  flip_a_data_byte(dir + "/ckpt_00000003.h5", "/model/layer_0000/weight");
  sluice_trainer* t = started(checkpoint_config(dir, 0, 3));
  ::testing::internal::CaptureStderr();
  const sluice_status status = sluice_trainer_resume(t, nullptr, &step);
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(status, SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(step, 2);  // every rank, since the status and step are agreed
  if (world_rank() == 0) {
    EXPECT_NE(warnings.find("skipping checkpoint '" + dir + "/ckpt_00000003.h5'"), std::string::npos) << warnings;
    EXPECT_NE(warnings.find("checksum"), std::string::npos) << warnings;
  } else {
    EXPECT_EQ(warnings, "");  // rank 0 speaks for the job
  }
  EXPECT_EQ(train(t, 2, 5), expected);
  EXPECT_EQ(predict(t), expected_prediction);
  sluice_trainer_destroy(t);

  // Naming the corrupt file itself is an error, not a silent fallback.
  sluice_trainer* by_name = started(config(""));
  const std::string latest = dir + "/ckpt_00000003.h5";
  EXPECT_EQ(sluice_trainer_resume(by_name, latest.c_str(), &step), SLUICE_ERROR_CHECKPOINT);
  EXPECT_NE(std::string(sluice_last_error()).find("ckpt_00000003.h5"), std::string::npos) << sluice_last_error();
  sluice_trainer_destroy(by_name);
}

TEST(CApiRunControl, OnlyCorruptCheckpointsAreAnErrorNamingEachNotAFreshStart) {
  const std::string dir = fresh_dir("all_corrupt");
  three_checkpoints(dir);
  flip_a_data_byte(dir + "/ckpt_00000003.h5", "/model/layer_0000/weight");
  flip_a_data_byte(dir + "/ckpt_00000002.h5", "/optimizer/layer_0003/weight/exp_avg");
  if (world_rank() == 0) std::ofstream(dir + "/ckpt_00000001.h5") << "a save that went wrong";
  MPI_Barrier(MPI_COMM_WORLD);
  sluice_trainer* t = started(checkpoint_config(dir, 0, 3));
  train(t, 0, 1);
  int64_t step = -1;
  ::testing::internal::CaptureStderr();
  const sluice_status status = sluice_trainer_resume(t, nullptr, &step);
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, SLUICE_ERROR_CHECKPOINT);
  const std::string message = sluice_last_error();
  for (const char* name : {"ckpt_00000003.h5", "ckpt_00000002.h5", "ckpt_00000001.h5", "fails verification"}) {
    EXPECT_NE(message.find(name), std::string::npos) << name << " not in: " << message;
  }
  sluice_stats stats = SLUICE_STATS_INIT;
  ASSERT_SLUICE_OK(sluice_trainer_stats(t, &stats));
  EXPECT_EQ(stats.steps, 1);  // unchanged
  sluice_trainer_destroy(t);
}

TEST(CApiRunControl, SignalOnOneRankStopsEveryRankWithACheckpoint) {
  const std::string dir = fresh_dir("preempted");
  sluice_trainer* t = started(checkpoint_config(dir, 0, 3));
  ASSERT_SLUICE_OK(sluice_install_signal_handlers(t));
  train(t, 0, 2);
  int stop = -1;
  ASSERT_SLUICE_OK(sluice_stop_requested(t, &stop));
  EXPECT_EQ(stop, 0);
  EXPECT_TRUE(files_in(dir).empty());

  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (world_rank() == ranks - 1) std::raise(SIGUSR1);  // only the last rank hears the batch system
  ASSERT_SLUICE_OK(sluice_stop_requested(t, &stop));
  EXPECT_EQ(stop, 1);
  EXPECT_EQ(files_in(dir), (std::set<std::string>{"ckpt_00000002.h5"}));
  ASSERT_SLUICE_OK(sluice_stop_requested(t, &stop));  // asked again: same answer, no second save
  EXPECT_EQ(stop, 1);
  EXPECT_EQ(sluice_stop_requested(t, nullptr), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(SLUICE_EXIT_PREEMPTED, 75);
  sluice_trainer_destroy(t);

  // The requeued job continues from it.
  sluice_trainer* requeued = started(checkpoint_config(dir, 0, 3));
  int64_t step = -1;
  ASSERT_SLUICE_OK(sluice_trainer_resume(requeued, nullptr, &step));
  EXPECT_EQ(step, 2);
  sluice_trainer_destroy(requeued);
  sluice::runtime::clear_preemption_request();  // this process goes on to other tests
}

TEST(CApiRunControl, SignalWithoutCheckpointDirStopsWithNothingSaved) {
  sluice_trainer* t = started(config(""));
  ASSERT_SLUICE_OK(sluice_install_signal_handlers(t));
  train(t, 0, 1);
  if (world_rank() == 0) std::raise(SIGTERM);
  int stop = -1;
  ASSERT_SLUICE_OK(sluice_stop_requested(t, &stop));
  EXPECT_EQ(stop, 1);
  sluice_trainer_destroy(t);
  sluice::runtime::clear_preemption_request();
}

TEST(CApiRunControl, DataSourcesOfTheCommandLineAreRefused) {
  for (const std::string data : {"{type: synthetic, batch: 8}", "{type: hdf5, batch: 8, path: x.h5}"}) {
    std::string yaml = config("");
    yaml.replace(yaml.find("{type: external, batch: 8}"), std::string("{type: external, batch: 8}").size(), data);
    sluice_trainer* t = nullptr;
    EXPECT_EQ(sluice_trainer_create(MPI_COMM_WORLD, yaml.c_str(), &t), SLUICE_ERROR_CONFIG);
    EXPECT_EQ(t, nullptr);
    EXPECT_NE(std::string(sluice_last_error()).find("data.type"), std::string::npos) << sluice_last_error();
  }
}

TEST(CApiRunControl, CallsBeforeStartAreOutOfOrder) {
  sluice_trainer* t = nullptr;
  ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, config("").c_str(), &t));
  int64_t step = 0;
  int stop = 0;
  EXPECT_EQ(sluice_trainer_resume(t, nullptr, &step), SLUICE_ERROR_STATE);
  EXPECT_EQ(sluice_stop_requested(t, &stop), SLUICE_ERROR_STATE);
  EXPECT_EQ(sluice_install_signal_handlers(nullptr), SLUICE_ERROR_INVALID_ARGUMENT);
  sluice_trainer_destroy(t);
}

}  // namespace
