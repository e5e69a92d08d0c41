// Model-only exports (sluice_export_model; checkpoint/model_export.h) and checkpoint.samples: drop. A trainer that
// holds a large replay buffer exports a file with no sample rows and no optimizer state, far smaller than its full
// checkpoint, that the inference model loads and predicts from bit for bit as from the full checkpoint; the export
// passes every reader check (structure, manifest, checksums), keeps application arrays only when asked, and a
// resume from it is refused naming it as an export. Under checkpoint.samples: drop a checkpoint holds no samples
// and a resume starts with an empty store (logged). Run with 2 ranks (2 stages) and 4 ranks (2 stages x 2 replicas).
#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/stat.h>

#include <sluice/sluice.h>

#include <cmath>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "checkpoint/format.h"
#include "checkpoint/model_export.h"
#include "checkpoint/reader.h"
#include "tests/capi/run_test_support.h"

namespace {

constexpr int kInputs = 6;
constexpr int kOutputs = 2;
constexpr int kBatch = 16;
constexpr int kCapacity = 4096;  // the replay buffer: 4096 x 8 floats, ~100 times the model's 2 x 104 parameters

using sluice::testing::fresh_dir;
using sluice::testing::world_rank;

std::string config(const std::string& checkpoint_section = "") {
  return "model:\n  inputs: " + std::to_string(kInputs) +
         "\n  layers:\n    - {type: linear, outputs: 8}\n    - {type: tanh}\n    - {type: linear, outputs: " +
         std::to_string(kOutputs) +
         "}\npipeline: {stages: 2, schedule: 1f1b, microbatches: 2}\noptimizer: {type: adamw, lr: 0.02}\n"
         "normalization: {inputs: auto, targets: auto, samples: 64}\n"
         "data: {type: external, batch: " +
         std::to_string(kBatch) + ", replay: {capacity: " + std::to_string(kCapacity) + "}}\nseed: 3\n" +
         checkpoint_section;
}

// Submits `samples` (each rank an equal share) and trains a few steps from the replay buffer.
void fill_and_train(sluice_trainer* t, int samples) {
  const int mine = samples / sluice::testing::world_size();
  std::vector<float> x(static_cast<size_t>(mine) * kInputs), y(static_cast<size_t>(mine) * kOutputs);
  const int first = world_rank() * mine;
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.37 * (first * kInputs + i)));
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(std::cos(0.71 * (first * kOutputs + i)) * 3 + 1);
  ASSERT_SLUICE_OK(sluice_submit_samples(t, x.data(), y.data(), mine));
  for (int step = 0; step < 4; ++step) {
    float loss = NAN;
    ASSERT_SLUICE_OK(sluice_train_submitted(t, 0, &loss));
  }
}

int64_t file_bytes(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 ? static_cast<int64_t>(info.st_size) : -1;
}

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

std::vector<float> predictions(const std::string& file) {
  sluice_model* m = nullptr;
  EXPECT_EQ(sluice_model_load(file.c_str(), &m), SLUICE_OK) << sluice_last_error();
  if (m == nullptr) return {};
  constexpr int kRows = 37;
  std::vector<float> x(kRows * kInputs), y(kRows * kOutputs, -1.0f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::cos(0.13 * i) * 2);
  EXPECT_EQ(sluice_model_predict(m, x.data(), y.data(), kRows), SLUICE_OK) << sluice_last_error();
  sluice_model_destroy(m);
  return y;
}

TEST(Export, HoldsNoSamplesOrOptimizerStateAndPredictsLikeTheFullCheckpoint) {
  sluice_trainer* t = sluice::testing::started_trainer(config());
  fill_and_train(t, kCapacity);
  int64_t held = 0;
  ASSERT_SLUICE_OK(sluice_submitted_count(t, &held));
  ASSERT_EQ(held, kCapacity);
  const std::string dir = fresh_dir("export_small");
  if (world_rank() == 0) ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  MPI_Barrier(MPI_COMM_WORLD);
  const std::string full = dir + "/full.h5", exported = dir + "/model.h5";
  ASSERT_SLUICE_OK(sluice_save_checkpoint(t, full.c_str()));
  ASSERT_SLUICE_OK(sluice_export_model(t, exported.c_str(), 0));
  if (world_rank() == 0) {
    // The replay buffer alone is 4096 x 8 floats (128 KiB); the export must not carry it.
    EXPECT_LT(file_bytes(exported) * 4, file_bytes(full)) << "export " << file_bytes(exported) << " bytes, full "
                                                          << file_bytes(full);
    const sluice::checkpoint::Reader reader(exported);  // structure, manifest and /train checked on open
    reader.verify_all();
    EXPECT_EQ(reader.format_version(), sluice::checkpoint::kFormatVersion);
    EXPECT_EQ(reader.attributes().at(sluice::checkpoint::kExportAttribute), sluice::checkpoint::kModelExportValue);
    EXPECT_EQ(reader.train_int(sluice::checkpoint::kSamplesHeldDataset), 0);
    int model = 0, normalization = 0;
    for (const std::string& path : reader.paths()) {
      EXPECT_FALSE(starts_with(path, "/samples/") || starts_with(path, "/optimizer/") ||
                   starts_with(path, "/accumulation/"))
          << path << " is in the export";
      model += starts_with(path, "/model/");
      normalization += starts_with(path, "/normalization/");
    }
    EXPECT_EQ(model, 4);          // two linear layers' weight and bias
    EXPECT_EQ(normalization, 4);  // inputs and targets, mean and std
    const sluice::checkpoint::Reader original(full);
    EXPECT_EQ(original.train_int(sluice::checkpoint::kSamplesHeldDataset), kCapacity);
    for (const std::string& path : original.paths()) {
      if (starts_with(path, "/model/") || starts_with(path, "/normalization/")) {
        EXPECT_EQ(reader.read(path).data, original.read(path).data) << path;
      }
    }
    const std::vector<float> from_full = predictions(full), from_export = predictions(exported);
    ASSERT_EQ(from_full.size(), from_export.size());
    ASSERT_FALSE(from_full.empty());
    EXPECT_EQ(std::memcmp(from_full.data(), from_export.data(), from_full.size() * sizeof(float)), 0);
  }
  // A resume needs the optimizer state the export left out: refused, naming it as an export, trainer unchanged.
  EXPECT_EQ(sluice_load_checkpoint(t, exported.c_str()), SLUICE_ERROR_CHECKPOINT);
  EXPECT_NE(std::strstr(sluice_last_error(), "model-only export"), nullptr) << sluice_last_error();
  ASSERT_SLUICE_OK(sluice_submitted_count(t, &held));
  EXPECT_EQ(held, kCapacity);
  sluice_trainer_destroy(t);
}

TEST(Export, RefusesAMissingPathNamingTheCall) {
  sluice_trainer* t = sluice::testing::started_trainer(config());
  EXPECT_EQ(sluice_export_model(t, nullptr, 0), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(sluice_last_error(), "sluice_export_model: checkpoint path is NULL or empty"), nullptr)
      << sluice_last_error();
  const std::string missing = fresh_dir("export_missing") + "/no/such/dir/model.h5";
  EXPECT_EQ(sluice_export_model(t, missing.c_str(), 0), SLUICE_ERROR_IO);
  EXPECT_NE(std::strstr(sluice_last_error(), "does not exist"), nullptr) << sluice_last_error();
  sluice_trainer_destroy(t);
}

TEST(Export, KeepsApplicationArraysOnlyWhenAsked) {
  sluice_trainer* t = sluice::testing::started_trainer(config());
  std::vector<double> field(10, 2.5);
  ASSERT_SLUICE_OK(sluice_register_state(t, "field", field.data(), SLUICE_FLOAT64, 10, SLUICE_STATE_REPLICATED));
  fill_and_train(t, 64);
  const std::string dir = fresh_dir("export_application");
  if (world_rank() == 0) ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  MPI_Barrier(MPI_COMM_WORLD);
  const std::string without = dir + "/without.h5", with = dir + "/with.h5", full = dir + "/full.h5";
  ASSERT_SLUICE_OK(sluice_export_model(t, without.c_str(), 0));
  ASSERT_SLUICE_OK(sluice_export_model(t, with.c_str(), 1));
  ASSERT_SLUICE_OK(sluice_save_checkpoint(t, full.c_str()));
  if (world_rank() == 0) {
    // The same from the full file, as `sluice export [--with-application-state]` writes it.
    const std::string file_without = dir + "/file_without.h5", file_with = dir + "/file_with.h5";
    sluice::checkpoint::ExportOptions options;
    sluice::checkpoint::export_model_file(full, file_without, options);
    options.with_application_state = true;
    sluice::checkpoint::export_model_file(full, file_with, options);
    for (const std::string& file : {without, file_without}) {
      EXPECT_TRUE(sluice::checkpoint::Reader(file).application_paths().empty()) << file;
    }
    for (const std::string& file : {with, file_with}) {
      const sluice::checkpoint::Reader reader(file);
      ASSERT_EQ(reader.application_paths().size(), 1u) << file;
      std::vector<double> back(10, 0.0);
      reader.read_application(reader.application_paths()[0], sluice::checkpoint::DataType::kFloat64, back.data(),
                              back.size());
      EXPECT_EQ(back, field) << file;
    }
  }
  sluice_trainer_destroy(t);
}

std::mutex log_mutex;
std::string log_text;
void keep_log(void*, sluice_log_level, const char* message) {
  const std::lock_guard<std::mutex> lock(log_mutex);
  log_text += std::string(message) + "\n";
}

TEST(CheckpointSamples, DropWritesNoSamplesAndAResumeStartsEmptyAndSaysSo) {
  const std::string section = "checkpoint: {samples: drop}\n";
  sluice_trainer* t = sluice::testing::started_trainer(config(section));
  fill_and_train(t, 512);
  const std::string dir = fresh_dir("samples_drop");
  if (world_rank() == 0) ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  MPI_Barrier(MPI_COMM_WORLD);
  const std::string file = dir + "/ckpt.h5";
  ASSERT_SLUICE_OK(sluice_save_checkpoint(t, file.c_str()));
  sluice_trainer_destroy(t);
  if (world_rank() == 0) {
    const sluice::checkpoint::Reader reader(file);
    EXPECT_EQ(reader.train_int(sluice::checkpoint::kSamplesHeldDataset), 0);
    for (const std::string& path : reader.paths()) EXPECT_FALSE(starts_with(path, "/samples/")) << path;
    EXPECT_EQ(reader.attributes().count(sluice::checkpoint::kExportAttribute), 0u);  // a full checkpoint otherwise
  }
  ASSERT_SLUICE_OK(sluice_set_log(keep_log, nullptr, SLUICE_LOG_WARNING));
  sluice_trainer* resumed = sluice::testing::started_trainer(config(section));
  ASSERT_SLUICE_OK(sluice_load_checkpoint(resumed, file.c_str()));
  ASSERT_SLUICE_OK(sluice_set_log(nullptr, nullptr, SLUICE_LOG_WARNING));
  int64_t held = -1;
  ASSERT_SLUICE_OK(sluice_submitted_count(resumed, &held));
  EXPECT_EQ(held, 0);
  if (world_rank() == 0) {
    EXPECT_NE(log_text.find("empty sample store: checkpoint.samples is drop"), std::string::npos) << log_text;
  }
  sluice_trainer_destroy(resumed);
}

TEST(CheckpointSamples, KeepIsTheDefaultAndAResumeGetsTheSamplesBack) {
  sluice_trainer* t = sluice::testing::started_trainer(config());
  fill_and_train(t, 512);
  const std::string dir = fresh_dir("samples_keep");
  if (world_rank() == 0) ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  MPI_Barrier(MPI_COMM_WORLD);
  const std::string file = dir + "/ckpt.h5";
  ASSERT_SLUICE_OK(sluice_save_checkpoint(t, file.c_str()));
  sluice_trainer_destroy(t);
  sluice_trainer* resumed = sluice::testing::started_trainer(config());
  ASSERT_SLUICE_OK(sluice_load_checkpoint(resumed, file.c_str()));
  int64_t held = -1;
  ASSERT_SLUICE_OK(sluice_submitted_count(resumed, &held));
  EXPECT_EQ(held, 512);
  sluice_trainer_destroy(resumed);
}

}  // namespace
