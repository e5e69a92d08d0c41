// Application state in the trainer's checkpoints (sluice_register_state): a simulation's arrays travel in the
// same atomic file as the model. Covers: a replicated float64 field and a per-rank int64 counter restored bit for
// bit by sluice_trainer_resume after periodic checkpoints (and by sluice_load_checkpoint); registration after
// start; `sluice inspect`'s summary listing the arrays; a per-rank array refused under another world size (a
// 1-rank trainer on rank 0 loading the 2-rank file) while a replicated one reshards; registrations that differ
// across ranks reported on every rank naming the rank; a registered array missing from the file refused with
// nothing restored; unregistered arrays in the file ignored; invalid names. Run with 2 ranks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <sluice/sluice.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "checkpoint/summary.h"
#include "tests/capi/run_test_support.h"

namespace {

namespace fs = std::filesystem;

constexpr int kInputs = 5;
constexpr int kOutputs = 3;
constexpr int kBatch = 8;
constexpr int kField = 16;

using sluice::testing::fresh_dir;
using sluice::testing::world_rank;

std::string config(int stages, const std::string& extra) {
  return "model:\n  inputs: " + std::to_string(kInputs) +
         "\n  layers:\n    - {type: linear, outputs: 8}\n    - {type: tanh}\n    - {type: linear, outputs: " +
         std::to_string(kOutputs) + "}\npipeline: {stages: " + std::to_string(stages) +
         ", schedule: 1f1b, microbatches: 2}\noptimizer: {type: adamw, lr: 0.02}\ndata: {type: external, batch: " +
         std::to_string(kBatch) + "}\nseed: 7\n" + extra;
}

std::string checkpoint_config(const std::string& dir, int every) {
  return config(2, "checkpoint: {dir: " + dir + ", every: " + std::to_string(every) + ", keep: 3}\n");
}

sluice_trainer* created(const std::string& yaml, MPI_Comm comm = MPI_COMM_WORLD) {
  sluice_trainer* t = nullptr;
  EXPECT_EQ(sluice_trainer_create(comm, yaml.c_str(), &t), SLUICE_OK) << sluice_last_error();
  return t;
}

void train(sluice_trainer* t, int from, int to, std::vector<double>* field = nullptr, int64_t* counter = nullptr) {
  for (int step = from; step < to; ++step) {
    std::vector<float> x(kBatch * kInputs), y(kBatch * kOutputs);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.3 * i + step));
    for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(std::cos(0.7 * i - step));
    // The simulation advances its own state before the surrogate's step (and its periodic checkpoint).
    if (field != nullptr) {
      for (int i = 0; i < kField; ++i) (*field)[i] = std::exp(0.1 * i) * std::sin(step + 1.0 / (i + 1));
    }
    if (counter != nullptr) *counter = 1000 * (step + 1) + world_rank();
    float loss = NAN;
    EXPECT_EQ(sluice_train_step(t, x.data(), y.data(), kBatch, &loss), SLUICE_OK) << sluice_last_error();
  }
}

TEST(CApiApplicationState, RestoredBitForBitByResumeAfterPeriodicCheckpoints) {
  const std::string dir = fresh_dir("periodic_state");
  std::vector<double> field(kField, 0.0);
  int64_t counter = 0;
  sluice_trainer* t = created(checkpoint_config(dir, 2));
  ASSERT_SLUICE_OK(sluice_register_state(t, "field", field.data(), SLUICE_FLOAT64, kField, SLUICE_STATE_REPLICATED));
  ASSERT_SLUICE_OK(sluice_trainer_start(t));
  // Registered after start: allowed too.
  ASSERT_SLUICE_OK(sluice_register_state(t, "counter", &counter, SLUICE_INT64, 1, SLUICE_STATE_PER_RANK));
  train(t, 0, 4, &field, &counter);  // checkpoints at steps 2 and 4
  const std::vector<double> field_at_4 = field;
  const int64_t counter_at_4 = counter;
  EXPECT_EQ(counter_at_4, 4000 + world_rank());
  train(t, 4, 5, &field, &counter);  // moves on past the checkpoint
  sluice_trainer_destroy(t);

  if (world_rank() == 0) {
    const sluice::checkpoint::CheckpointSummary summary = sluice::checkpoint::summarize(dir);
    ASSERT_EQ(summary.application.size(), 3u);
    EXPECT_EQ(summary.application[0].name, "counter/rank_0");
    EXPECT_EQ(summary.application[0].type, "int64");
    EXPECT_EQ(summary.application[1].name, "counter/rank_1");
    EXPECT_EQ(summary.application[2].name, "field");
    EXPECT_EQ(summary.application[2].type, "float64");
    EXPECT_EQ(summary.application[2].elements, kField);
    EXPECT_TRUE(summary.checksums_verified) << summary.checksum_error;
    EXPECT_NE(sluice::checkpoint::summary_text(summary).find("field float64 [16]"), std::string::npos);
  }

  // A fresh job: the arrays hold something else until resume brings back step 4's values.
  std::vector<double> restored(kField, -1.0);
  int64_t restored_counter = -1;
  sluice_trainer* u = created(checkpoint_config(dir, 2));
  ASSERT_SLUICE_OK(sluice_register_state(u, "field", restored.data(), SLUICE_FLOAT64, kField, SLUICE_STATE_REPLICATED));
  ASSERT_SLUICE_OK(sluice_register_state(u, "counter", &restored_counter, SLUICE_INT64, 1, SLUICE_STATE_PER_RANK));
  ASSERT_SLUICE_OK(sluice_trainer_start(u));
  int64_t step = -1;
  ASSERT_SLUICE_OK(sluice_trainer_resume(u, nullptr, &step));
  EXPECT_EQ(step, 4);
  EXPECT_EQ(std::memcmp(restored.data(), field_at_4.data(), kField * sizeof(double)), 0);
  EXPECT_EQ(restored_counter, counter_at_4);

  // The explicit calls carry them too; step 2's file has step 2's values.
  ASSERT_SLUICE_OK(sluice_load_checkpoint(u, (dir + "/ckpt_00000002.h5").c_str()));
  EXPECT_EQ(restored_counter, 2000 + world_rank());
  restored_counter = 77 + world_rank();
  ASSERT_SLUICE_OK(sluice_save_checkpoint(u, (dir + "/explicit.h5").c_str()));
  restored_counter = 0;
  ASSERT_SLUICE_OK(sluice_load_checkpoint(u, (dir + "/explicit.h5").c_str()));
  EXPECT_EQ(restored_counter, 77 + world_rank());
  sluice_trainer_destroy(u);
}

TEST(CApiApplicationState, PerRankStateRefusedUnderAnotherWorldSize) {
  const std::string dir = fresh_dir("world_size");
  const std::string file = dir + "/two_ranks.h5";
  if (world_rank() == 0) fs::create_directories(dir);
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<double> field(kField);
  for (int i = 0; i < kField; ++i) field[i] = 0.5 * i;
  int64_t counter = 10 + world_rank();
  sluice_trainer* t = created(config(2, ""));
  ASSERT_SLUICE_OK(sluice_register_state(t, "field", field.data(), SLUICE_FLOAT64, kField, SLUICE_STATE_REPLICATED));
  ASSERT_SLUICE_OK(sluice_register_state(t, "counter", &counter, SLUICE_INT64, 1, SLUICE_STATE_PER_RANK));
  ASSERT_SLUICE_OK(sluice_trainer_start(t));
  ASSERT_SLUICE_OK(sluice_save_checkpoint(t, file.c_str()));
  sluice_trainer_destroy(t);

  if (world_rank() == 0) {  // one rank alone: the world size is 1 now
    std::vector<double> one_field(kField, 0.0);
    int64_t one_counter = -5;
    sluice_trainer* one = created(config(1, ""), MPI_COMM_SELF);
    ASSERT_SLUICE_OK(
        sluice_register_state(one, "field", one_field.data(), SLUICE_FLOAT64, kField, SLUICE_STATE_REPLICATED));
    ASSERT_SLUICE_OK(sluice_register_state(one, "counter", &one_counter, SLUICE_INT64, 1, SLUICE_STATE_PER_RANK));
    ASSERT_SLUICE_OK(sluice_trainer_start(one));
    int64_t step = -1;
    EXPECT_EQ(sluice_trainer_resume(one, file.c_str(), &step), SLUICE_ERROR_CHECKPOINT);
    const std::string message = sluice_last_error();
    EXPECT_NE(message.find("'counter'"), std::string::npos) << message;
    EXPECT_NE(message.find("saved by 2 ranks"), std::string::npos) << message;
    EXPECT_EQ(one_counter, -5);      // nothing restored
    EXPECT_EQ(one_field[3], 0.0);    // not even the replicated array
    // Without the per-rank array the replicated one reshards onto one rank.
    ASSERT_SLUICE_OK(sluice_unregister_state(one, "counter"));
    ASSERT_SLUICE_OK(sluice_load_checkpoint(one, file.c_str()));
    EXPECT_EQ(std::memcmp(one_field.data(), field.data(), kField * sizeof(double)), 0);
    sluice_trainer_destroy(one);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(CApiApplicationState, MismatchedRegistrationIsReportedOnEveryRank) {
  const std::string dir = fresh_dir("mismatch");
  if (world_rank() == 0) fs::create_directories(dir);
  MPI_Barrier(MPI_COMM_WORLD);
  double field64[4] = {1, 2, 3, 4};
  int64_t field_int[4] = {1, 2, 3, 4};
  sluice_trainer* t = created(config(2, ""));
  if (world_rank() == 1) {
    ASSERT_SLUICE_OK(sluice_register_state(t, "field", field_int, SLUICE_INT64, 4, SLUICE_STATE_REPLICATED));
  } else {
    ASSERT_SLUICE_OK(sluice_register_state(t, "field", field64, SLUICE_FLOAT64, 4, SLUICE_STATE_REPLICATED));
  }
  ASSERT_SLUICE_OK(sluice_trainer_start(t));
  const std::string file = dir + "/mismatch.h5";
  EXPECT_EQ(sluice_save_checkpoint(t, file.c_str()), SLUICE_ERROR_INVALID_ARGUMENT);
  std::string message = sluice_last_error();
  EXPECT_NE(message.find("rank 1"), std::string::npos) << message;
  EXPECT_NE(message.find("'field' is float64[4] replicated on rank 0 but int64[4] replicated on rank 1"),
            std::string::npos)
      << message;
  EXPECT_FALSE(fs::exists(file));

  // An array on one rank only is named too; after fixing it the save succeeds (the trainer stayed usable).
  ASSERT_SLUICE_OK(sluice_unregister_state(t, "field"));
  int64_t extra = 3;
  if (world_rank() == 1) {
    ASSERT_SLUICE_OK(sluice_register_state(t, "extra", &extra, SLUICE_INT64, 1, SLUICE_STATE_PER_RANK));
  }
  EXPECT_EQ(sluice_save_checkpoint(t, file.c_str()), SLUICE_ERROR_INVALID_ARGUMENT);
  message = sluice_last_error();
  EXPECT_NE(message.find("'extra' (int64 per-rank) is registered on rank 1 but not on rank 0"), std::string::npos)
      << message;
  if (world_rank() == 1) {
    ASSERT_SLUICE_OK(sluice_unregister_state(t, "extra"));
  }
  EXPECT_EQ(sluice_save_checkpoint(t, file.c_str()), SLUICE_OK) << sluice_last_error();
  sluice_trainer_destroy(t);
}

TEST(CApiApplicationState, MissingArrayRefusedAndNothingRestored) {
  const std::string dir = fresh_dir("missing");
  if (world_rank() == 0) fs::create_directories(dir);
  MPI_Barrier(MPI_COMM_WORLD);
  const std::string file = dir + "/saved.h5";
  float temperature[3] = {1.5f, 2.5f, 3.5f};
  int32_t cells = 40 + world_rank();
  sluice_trainer* t = created(config(2, ""));
  ASSERT_SLUICE_OK(sluice_register_state(t, "temperature", temperature, SLUICE_FLOAT32, 3, SLUICE_STATE_REPLICATED));
  ASSERT_SLUICE_OK(sluice_register_state(t, "cells", &cells, SLUICE_INT32, 1, SLUICE_STATE_PER_RANK));
  ASSERT_SLUICE_OK(sluice_trainer_start(t));
  ASSERT_SLUICE_OK(sluice_save_checkpoint(t, file.c_str()));

  // A new array the file does not have: refused naming it, and the arrays the file does have stay untouched.
  temperature[0] = -1.0f;
  cells = -1;
  double pressure = 9.0;
  ASSERT_SLUICE_OK(sluice_register_state(t, "pressure", &pressure, SLUICE_FLOAT64, 1, SLUICE_STATE_REPLICATED));
  EXPECT_EQ(sluice_load_checkpoint(t, file.c_str()), SLUICE_ERROR_CHECKPOINT);
  const std::string message = sluice_last_error();
  EXPECT_NE(message.find("application state 'pressure' is missing"), std::string::npos) << message;
  EXPECT_EQ(temperature[0], -1.0f);
  EXPECT_EQ(cells, -1);
  EXPECT_EQ(pressure, 9.0);

  // Arrays in the file that are not registered are ignored.
  ASSERT_SLUICE_OK(sluice_unregister_state(t, "pressure"));
  ASSERT_SLUICE_OK(sluice_unregister_state(t, "temperature"));
  ASSERT_SLUICE_OK(sluice_load_checkpoint(t, file.c_str()));
  EXPECT_EQ(cells, 40 + world_rank());
  EXPECT_EQ(temperature[0], -1.0f);

  // A count that differs from the file's is refused naming the dataset.
  ASSERT_SLUICE_OK(sluice_register_state(t, "temperature", temperature, SLUICE_FLOAT32, 2, SLUICE_STATE_REPLICATED));
  EXPECT_EQ(sluice_load_checkpoint(t, file.c_str()), SLUICE_ERROR_CHECKPOINT);
  EXPECT_NE(std::string(sluice_last_error()).find("/application/temperature"), std::string::npos)
      << sluice_last_error();
  sluice_trainer_destroy(t);
}

TEST(CApiApplicationState, InvalidRegistrationsNameTheProblem) {
  sluice_trainer* t = created(config(2, ""));
  double value = 0;
  EXPECT_EQ(sluice_register_state(t, "", &value, SLUICE_FLOAT64, 1, SLUICE_STATE_REPLICATED),
            SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sluice_last_error()).find("must be non-empty"), std::string::npos) << sluice_last_error();
  EXPECT_EQ(sluice_register_state(t, "a/b", &value, SLUICE_FLOAT64, 1, SLUICE_STATE_REPLICATED),
            SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sluice_last_error()).find("'a/b'"), std::string::npos) << sluice_last_error();
  EXPECT_EQ(sluice_register_state(t, nullptr, &value, SLUICE_FLOAT64, 1, SLUICE_STATE_REPLICATED),
            SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(sluice_register_state(t, "v", nullptr, SLUICE_FLOAT64, 1, SLUICE_STATE_REPLICATED),
            SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(sluice_register_state(t, "v", &value, SLUICE_FLOAT64, -1, SLUICE_STATE_REPLICATED),
            SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(sluice_register_state(t, "v", &value, static_cast<sluice_dtype>(9), 1, SLUICE_STATE_REPLICATED),
            SLUICE_ERROR_INVALID_ARGUMENT);
  ASSERT_SLUICE_OK(sluice_register_state(t, "v", &value, SLUICE_FLOAT64, 1, SLUICE_STATE_REPLICATED));
  EXPECT_EQ(sluice_register_state(t, "v", &value, SLUICE_FLOAT64, 1, SLUICE_STATE_REPLICATED),
            SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sluice_last_error()).find("already registered"), std::string::npos) << sluice_last_error();
  EXPECT_EQ(sluice_unregister_state(t, "w"), SLUICE_ERROR_INVALID_ARGUMENT);
  sluice_trainer_destroy(t);
}

}  // namespace
