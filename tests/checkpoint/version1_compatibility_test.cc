// Version-1 and version-2 checkpoints (written by the builds before format_version 2 and 3;
// tests/checkpoint/testdata/README.md) still inspect, resume and deploy; what a resumed run saves is version 3, with
// PyTorch's shapes (a bias [out] where older files hold [1, out]). A resumed trainer holds exactly the file's values (bit for bit), and training goes on
// as today's uninterrupted run does, within rounding: the files were trained at 2cb5e64, and kernels changed in
// their last bits since (the CPU GELU's vectorised exp), so bit equality with today's run is not a format property.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "checkpoint/directory.h"
#include "checkpoint/layer_paths.h"
#include "checkpoint/reader.h"
#include "checkpoint/summary.h"
#include "core/runtime/inference_model.h"
#include "core/runtime/resume_fallback.h"
#include "core/runtime/trainer_checkpoint.h"
#include "tests/checkpoint/checkpoint_test_support.h"
#include "tests/checkpoint/tiny_run.h"

namespace sluice::checkpoint {
namespace {

constexpr int kSavedStep = 3;  // the step both committed files hold
constexpr int kLastStep = 5;

void expect_same_bits(const std::map<std::string, std::vector<float>>& a,
                      const std::map<std::string, std::vector<float>>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (const auto& [name, values] : a) {
    const auto other = b.find(name);
    ASSERT_NE(other, b.end()) << what << ": " << name;
    ASSERT_EQ(values.size(), other->second.size()) << what << ": " << name;
    EXPECT_EQ(0, std::memcmp(values.data(), other->second.data(), values.size() * sizeof(float)))
        << what << ": " << name << " differs";
  }
}

// Relative closeness, for runs whose kernels differ in the last bits (a few ulp per op, a few steps).
void expect_close(const std::map<std::string, std::vector<float>>& a,
                  const std::map<std::string, std::vector<float>>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (const auto& [name, values] : a) {
    const auto other = b.find(name);
    ASSERT_NE(other, b.end()) << what << ": " << name;
    ASSERT_EQ(values.size(), other->second.size()) << what << ": " << name;
    for (size_t i = 0; i < values.size(); ++i) {
      EXPECT_NEAR(values[i], other->second[i], 1e-5 * (1.0 + std::fabs(other->second[i])))
          << what << ": " << name << "[" << i << "]";
    }
  }
}

// The parameters stored in `file`, keyed like testing::parameters_of ("layers.3.weight" is /model/layer_0003/weight).
std::map<std::string, std::vector<float>> parameters_in_file(const std::string& file,
                                                            const std::map<std::string, std::vector<float>>& names) {
  const Reader reader(file);
  std::map<std::string, std::vector<float>> stored;
  for (const auto& [name, values] : names) {
    const size_t first_dot = name.find('.'), second_dot = name.find('.', first_dot + 1);
    const int layer = std::stoi(name.substr(first_dot + 1, second_dot - first_dot - 1));
    stored[name] = reader.read(model_path(layer, name.substr(second_dot + 1))).data;
  }
  return stored;
}

class VersionOneCompatibility : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    file_ = testing::testdata_path(GetParam());
    dir_ = testing::make_shared_temp_dir(MPI_COMM_WORLD);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The committed file's format_version: its name starts with "v1_" or "v2_".
  int version() const { return GetParam()[1] - '0'; }

  std::string file_;
  std::string dir_;
};

TEST_P(VersionOneCompatibility, InspectsWithItsVersionsRules) {
  const CheckpointSummary summary = summarize(file_);
  EXPECT_EQ(summary.format_version, version());
  EXPECT_EQ(summary.manifest_verified, version() >= 2);
  if (version() == 1) {
    EXPECT_THAT(summary_text(summary), ::testing::HasSubstr("format_version:  1 (no manifest"));
  }
  EXPECT_TRUE(summary.checksums_verified) << summary.checksum_error;
  EXPECT_EQ(summary.train_ints.at("step"), kSavedStep);
  EXPECT_EQ(summary.layers.size(), 3u);  // linear, layernorm, linear (gelu has no parameters)
  EXPECT_EQ(Reader(file_).has_manifest(), version() >= 2);
  EXPECT_EQ(Reader(file_).dims(model_path(0, "bias")), (std::vector<int64_t>{1, 6}));  // 2-D before version 3
}

TEST_P(VersionOneCompatibility, ResumesAndTrainingContinuesAsTheUninterruptedRun) {
  auto at_saved_step = testing::tiny_trainer(kSavedStep);
  testing::train_to_end(*at_saved_step);
  auto uninterrupted = testing::tiny_trainer(kLastStep);
  testing::train_to_end(*uninterrupted);

  const std::string copy = dir_ + "/" + checkpoint_file_name(kSavedStep);
  std::filesystem::copy_file(file_, copy);
  auto resumed = testing::tiny_trainer(kLastStep);
  EXPECT_EQ(runtime::load_newest_valid(*resumed, dir_, nullptr), copy);
  ASSERT_EQ(resumed->steps_done(), static_cast<uint64_t>(kSavedStep));
  const auto loaded = testing::parameters_of(*resumed);
  expect_same_bits(loaded, parameters_in_file(file_, loaded), "loaded parameters against the file");
  expect_close(loaded, testing::parameters_of(*at_saved_step), "loaded parameters against today's run");
  testing::train_to_end(*resumed);
  EXPECT_EQ(resumed->steps_done(), static_cast<uint64_t>(kLastStep));
  expect_close(testing::parameters_of(*resumed), testing::parameters_of(*uninterrupted), "after resuming");

  // What the resumed run saves is a version-3 file: PyTorch's shapes, the same values.
  const std::string saved = dir_ + "/" + checkpoint_file_name(kLastStep);
  runtime::save_checkpoint(*resumed, saved);
  const Reader reader(saved);
  EXPECT_EQ(reader.format_version(), 3);
  EXPECT_TRUE(reader.has_manifest());
  reader.verify_all();
  EXPECT_EQ(reader.dims(model_path(0, "weight")), (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(reader.dims(model_path(0, "bias")), (std::vector<int64_t>{6}));
  EXPECT_EQ(reader.dims(model_path(2, "gamma")), (std::vector<int64_t>{6}));
  EXPECT_EQ(reader.dims(optimizer_path(0, "bias", "exp_avg")), (std::vector<int64_t>{6}));
  EXPECT_EQ(reader.dims(optimizer_path(2, "beta", "exp_avg_sq")), (std::vector<int64_t>{6}));
  auto reloaded = testing::tiny_trainer(kLastStep);
  runtime::load_checkpoint(*reloaded, saved);
  expect_same_bits(testing::parameters_of(*reloaded), testing::parameters_of(*resumed), "version 3 round trip");
  const CheckpointSummary summary = summarize(saved);
  EXPECT_TRUE(summary.manifest_verified);
  EXPECT_TRUE(summary.checksums_verified) << summary.checksum_error;
  EXPECT_THAT(summary_json(summary), ::testing::HasSubstr("\"format_version\":3,\"manifest_verified\":true"));
}

TEST_P(VersionOneCompatibility, DeploysThroughTheInferenceModel) {
  runtime::InferenceModel model;
  model.load(file_);
  ASSERT_EQ(model.input_features(), 4);
  ASSERT_EQ(model.output_features(), 2);
  constexpr int64_t kRows = 5;
  std::vector<float> inputs(kRows * 4);
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
  std::vector<float> deployed(kRows * 2);
  model.predict(inputs.data(), deployed.data(), kRows);

  // The same model trained to the same step by today's trainer predicts the same.
  auto trainer = testing::tiny_trainer(kSavedStep);
  testing::train_to_end(*trainer);
  std::vector<float> trained(kRows * 2);
  trainer->predict(inputs.data(), trained.data(), kRows);
  for (size_t i = 0; i < trained.size(); ++i) EXPECT_NEAR(deployed[i], trained[i], 1e-6) << "output " << i;
}

INSTANTIATE_TEST_SUITE_P(CommittedFiles, VersionOneCompatibility,
                         ::testing::Values("v1_1rank_ckpt_00000003.h5", "v1_2stages_ckpt_00000003.h5",
                                           "v2_1rank_ckpt_00000003.h5", "v2_2stages_ckpt_00000003.h5"));

// A version-2 checkpoint of a field model (testdata/v2_field.yaml: conv, group_norm, pool, conv_transpose, auto
// normalization per feature as version 2 computed it) resumes bit for bit; what it saves is version 3 with PyTorch's
// shapes, and that file loads back bit for bit and deploys with the same per-feature statistics.
TEST(VersionTwoFieldCompatibility, ResumesAndSavesPyTorchShapes) {
  const std::string file = testing::testdata_path("v2_field_ckpt_00000003.h5");
  const std::string dir = testing::make_shared_temp_dir(MPI_COMM_WORLD);
  auto resumed = testing::testdata_trainer("v2_field.yaml", kLastStep);
  runtime::load_checkpoint(*resumed, file);
  const auto loaded = testing::parameters_of(*resumed);
  expect_same_bits(loaded, parameters_in_file(file, loaded), "loaded parameters against the version-2 file");
  EXPECT_EQ(resumed->state().normalization.inputs().mean.size(), 32u);  // the file's per-feature statistics
  const std::vector<float> v2_mean = Reader(file).read(normalization_path("inputs_mean")).data;
  EXPECT_EQ(resumed->state().normalization.inputs().mean, v2_mean);

  // Three held samples (as sluice_submit_samples leaves them): stored as fields [held, C, D, D].
  std::vector<float> held_inputs(3 * 32), held_targets(3 * 32);
  for (size_t i = 0; i < held_inputs.size(); ++i) held_inputs[i] = static_cast<float>(i) * 0.5f;
  for (size_t i = 0; i < held_targets.size(); ++i) held_targets[i] = -static_cast<float>(i);
  resumed->append_samples(held_inputs.data(), held_targets.data(), 3);

  const std::string saved = dir + "/" + checkpoint_file_name(kSavedStep);
  runtime::save_checkpoint(*resumed, saved);
  const Reader reader(saved);
  EXPECT_EQ(reader.format_version(), 3);
  using Dims = std::vector<int64_t>;
  EXPECT_EQ(reader.dims(model_path(0, "weight")), (Dims{3, 2, 3, 3}));  // conv [out, in/groups, k, k]
  EXPECT_EQ(reader.dims(model_path(0, "bias")), (Dims{3}));
  EXPECT_EQ(reader.dims(model_path(1, "weight")), (Dims{3}));           // group_norm [C]
  EXPECT_EQ(reader.dims(model_path(1, "bias")), (Dims{3}));
  EXPECT_EQ(reader.dims(model_path(4, "weight")), (Dims{3, 2, 2, 2}));  // conv_transpose [in, out, k, k]
  EXPECT_EQ(reader.dims(model_path(4, "bias")), (Dims{2}));
  EXPECT_EQ(reader.dims(optimizer_path(0, "weight", "exp_avg")), (Dims{3, 2, 3, 3}));
  EXPECT_EQ(reader.dims(optimizer_path(4, "weight", "exp_avg_sq")), (Dims{3, 2, 2, 2}));
  EXPECT_EQ(reader.dims(normalization_path("inputs_mean")), (Dims{32}));
  EXPECT_EQ(reader.dims(samples_path("inputs")), (Dims{3, 2, 4, 4}));
  EXPECT_EQ(reader.dims(samples_path("targets")), (Dims{3, 2, 4, 4}));

  auto reloaded = testing::testdata_trainer("v2_field.yaml", kLastStep);
  runtime::load_checkpoint(*reloaded, saved);
  expect_same_bits(testing::parameters_of(*reloaded), loaded, "version 3 round trip");
  ASSERT_EQ(reloaded->submitted_samples().held(), 3);
  EXPECT_EQ(reloaded->submitted_samples().inputs_in_order(), held_inputs);
  EXPECT_EQ(reloaded->submitted_samples().targets_in_order(), held_targets);
  testing::train_to_end(*reloaded);
  testing::train_to_end(*resumed);
  expect_same_bits(testing::parameters_of(*reloaded), testing::parameters_of(*resumed), "training on after it");

  runtime::InferenceModel from_v2, from_v3;
  from_v2.load(file);
  from_v3.load(saved);
  std::vector<float> inputs(3 * 32);
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = 0.1f * static_cast<float>(i % 11) - 0.4f;
  std::vector<float> a(3 * 32), b(3 * 32);
  from_v2.predict(inputs.data(), a.data(), 3);
  from_v3.predict(inputs.data(), b.data(), 3);
  EXPECT_EQ(a, b);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sluice::checkpoint
