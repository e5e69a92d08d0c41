// Crafted checkpoints must not load silently (docs/CHECKPOINT_FORMAT.md, version 2). Each attack is made with the
// HDF5 C API on a freshly saved checkpoint of a real trainer, and must be refused -- with a message naming the
// dataset -- by `sluice inspect`, by a directory resume (load_newest_valid) and by a file resume (load_checkpoint).
// The unmodified file passes all three, so every expectation here can fail. Checksums the attacks forge are computed
// here from the documented recipe (libdeflate's CRC-32 = zlib.crc32), not with the code under test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <hdf5.h>
#include <libdeflate.h>
#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/directory.h"
#include "core/common/error.h"
#include "core/runtime/inference_model.h"
#include "core/runtime/resume_fallback.h"
#include "core/runtime/trainer_checkpoint.h"
#include "tests/checkpoint/checkpoint_test_support.h"
#include "tests/checkpoint/tiny_run.h"
#include "tools/sluice/inspect_command.h"

namespace sluice::checkpoint {
namespace {

using ::testing::HasSubstr;

constexpr int kSavedStep = 2;

uint32_t crc_of(const std::string& header, const void* bytes, size_t size) {
  const uint32_t after_header = libdeflate_crc32(0, header.data(), header.size());
  return libdeflate_crc32(after_header, bytes, size);
}

void set_crc(hid_t dataset, uint32_t crc) {
  if (H5Aexists(dataset, "crc32") > 0) {
    ASSERT_GE(H5Adelete(dataset, "crc32"), 0);
  }
  const hid_t scalar = H5Screate(H5S_SCALAR);
  const hid_t attribute = H5Acreate2(dataset, "crc32", H5T_STD_U32LE, scalar, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(attribute, 0);
  ASSERT_GE(H5Awrite(attribute, H5T_NATIVE_UINT32, &crc), 0);
  H5Aclose(attribute);
  H5Sclose(scalar);
}

// Replaces a float32 dataset by one of float64 holding the same values, with a crc32 over the float64 bytes alone
// (the version-1 recipe).
void rewrite_as_float64(hid_t file, const std::string& path) {
  const hid_t old = H5Dopen2(file, path.c_str(), H5P_DEFAULT);
  const hid_t space = H5Dget_space(old);
  const auto count = static_cast<size_t>(H5Sget_simple_extent_npoints(space));
  std::vector<double> values(count);
  ASSERT_GE(H5Dread(old, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
  H5Dclose(old);
  ASSERT_GE(H5Ldelete(file, path.c_str(), H5P_DEFAULT), 0);
  const hid_t wide = H5Dcreate2(file, path.c_str(), H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(wide, 0);
  ASSERT_GE(H5Dwrite(wide, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
  set_crc(wide, crc_of("", values.data(), values.size() * sizeof(double)));
  H5Dclose(wide);
  H5Sclose(space);
}

// Writes `value` into a /train scalar with a crc32 that matches under `header` ("" for version 1).
void forge_train_value(hid_t file, const std::string& path, int64_t value, const std::string& header) {
  const hid_t dataset = H5Dopen2(file, path.c_str(), H5P_DEFAULT);
  ASSERT_GE(dataset, 0);
  ASSERT_GE(H5Dwrite(dataset, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value), 0);
  set_crc(dataset, crc_of(header, &value, sizeof value));
  H5Dclose(dataset);
}

// A float32 [1, 6] dataset the manifest does not list, with a checksum that matches the version-2 recipe.
void add_unlisted_dataset(hid_t file, const std::string& path) {
  const hsize_t dims[2] = {1, 6};
  const std::vector<float> values = {1, 2, 3, 4, 5, 6};
  const hid_t space = H5Screate_simple(2, dims, nullptr);
  const hid_t dataset = H5Dcreate2(file, path.c_str(), H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(dataset, 0);
  ASSERT_GE(H5Dwrite(dataset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
  set_crc(dataset, crc_of(path + "|float32|1,6", values.data(), values.size() * sizeof(float)));
  H5Dclose(dataset);
  H5Sclose(space);
}

// Flips one byte of a root string attribute in place (same fixed-length type): what a bit flip on disk does.
void flip_root_string_attribute(hid_t file, const std::string& name) {
  const hid_t attribute = H5Aopen(file, name.c_str(), H5P_DEFAULT);
  ASSERT_GE(attribute, 0) << name;
  const hid_t type = H5Aget_type(attribute);
  std::string value(H5Tget_size(type), '\0');
  ASSERT_GE(H5Aread(attribute, type, value.data()), 0);
  ASSERT_GT(value.size(), 1u) << name;
  value[0] = static_cast<char>(value[0] ^ 0x01);
  ASSERT_GE(H5Awrite(attribute, type, value.data()), 0);
  H5Tclose(type);
  H5Aclose(attribute);
}

void add_string_attribute(hid_t file, const std::string& object, const std::string& name) {
  const hid_t target = H5Oopen(file, object.c_str(), H5P_DEFAULT);
  ASSERT_GE(target, 0) << object;
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, 6);
  const hid_t scalar = H5Screate(H5S_SCALAR);
  const hid_t attribute = H5Acreate2(target, name.c_str(), type, scalar, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(attribute, 0);
  ASSERT_GE(H5Awrite(attribute, type, "extra"), 0);
  H5Aclose(attribute);
  H5Sclose(scalar);
  H5Tclose(type);
  H5Oclose(target);
}

// Replaces a float32 dataset by an extendible (chunked, unlimited first dimension) one holding the same values with
// the same (still matching) crc32: only its maximum dimensions differ from what the writer wrote.
void make_extendible(hid_t file, const std::string& path) {
  const hid_t old = H5Dopen2(file, path.c_str(), H5P_DEFAULT);
  const hid_t old_space = H5Dget_space(old);
  hsize_t dims[2] = {0, 0};
  ASSERT_EQ(H5Sget_simple_extent_dims(old_space, dims, nullptr), 2);
  std::vector<float> values(dims[0] * dims[1]);
  ASSERT_GE(H5Dread(old, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
  uint32_t crc = 0;
  const hid_t crc_attribute = H5Aopen(old, "crc32", H5P_DEFAULT);
  ASSERT_GE(H5Aread(crc_attribute, H5T_NATIVE_UINT32, &crc), 0);
  H5Aclose(crc_attribute);
  H5Sclose(old_space);
  H5Dclose(old);
  ASSERT_GE(H5Ldelete(file, path.c_str(), H5P_DEFAULT), 0);
  const hsize_t limits[2] = {H5S_UNLIMITED, dims[1]};
  const hid_t space = H5Screate_simple(2, dims, limits);
  const hid_t creation = H5Pcreate(H5P_DATASET_CREATE);
  ASSERT_GE(H5Pset_chunk(creation, 2, dims), 0);
  const hid_t grown = H5Dcreate2(file, path.c_str(), H5T_IEEE_F32LE, space, H5P_DEFAULT, creation, H5P_DEFAULT);
  ASSERT_GE(grown, 0);
  ASSERT_GE(H5Dwrite(grown, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
  set_crc(grown, crc);
  H5Dclose(grown);
  H5Pclose(creation);
  H5Sclose(space);
}

// Writes `value` into element `index` of a float32 dataset and recomputes its crc32 by the version-2 recipe
// ("<path>|float32|<dims>" then the bytes): a file every checksum vouches for, holding a value training cannot make.
void forge_float(hid_t file, const std::string& path, size_t index, float value) {
  const hid_t dataset = H5Dopen2(file, path.c_str(), H5P_DEFAULT);
  ASSERT_GE(dataset, 0) << path;
  const hid_t space = H5Dget_space(dataset);
  std::vector<hsize_t> dims(static_cast<size_t>(H5Sget_simple_extent_ndims(space)));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  std::vector<float> values(static_cast<size_t>(H5Sget_simple_extent_npoints(space)));
  ASSERT_LT(index, values.size()) << path;
  ASSERT_GE(H5Dread(dataset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
  values[index] = value;
  ASSERT_GE(H5Dwrite(dataset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
  std::string header = path + "|float32|";
  for (size_t d = 0; d < dims.size(); ++d) header += (d ? "," : "") + std::to_string(dims[d]);
  set_crc(dataset, crc_of(header, values.data(), values.size() * sizeof(float)));
  H5Sclose(space);
  H5Dclose(dataset);
}

void swap_links(hid_t file, const std::string& a, const std::string& b) {
  ASSERT_GE(H5Lmove(file, a.c_str(), file, "/swap_in_progress", H5P_DEFAULT, H5P_DEFAULT), 0);
  ASSERT_GE(H5Lmove(file, b.c_str(), file, a.c_str(), H5P_DEFAULT, H5P_DEFAULT), 0);
  ASSERT_GE(H5Lmove(file, "/swap_in_progress", file, b.c_str(), H5P_DEFAULT, H5P_DEFAULT), 0);
}

class CraftedCheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::make_shared_temp_dir(MPI_COMM_WORLD);
    pristine_ = dir_ + "/pristine.h5";
    auto trainer = testing::tiny_trainer(kSavedStep);
    testing::train_to_end(*trainer);
    runtime::save_checkpoint(*trainer, pristine_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A directory holding one checkpoint: `source` after `attack` (HDF5 C API, file opened read-write).
  std::string craft(const std::string& name, const std::string& source, const std::function<void(hid_t)>& attack) {
    const std::string dir = dir_ + "/" + name;
    std::filesystem::create_directory(dir);
    const std::string file = dir + "/" + checkpoint_file_name(kSavedStep);
    std::filesystem::copy_file(source, file);
    std::filesystem::permissions(file, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
    const hid_t handle = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    EXPECT_GE(handle, 0) << file;
    attack(handle);
    EXPECT_GE(H5Fclose(handle), 0);
    return file;
  }
  std::string craft(const std::string& name, const std::function<void(hid_t)>& attack) {
    return craft(name, pristine_, attack);
  }

  // `sluice inspect FILE`: what the command line would print and throw.
  static void inspect(const std::string& file) {
    CLI::App app;
    tools::register_inspect_command(app);
    std::vector<std::string> args = {file, "inspect"};  // CLI11 takes the vector form in reverse order
    ::testing::internal::CaptureStdout();
    try {
      app.parse(args);
    } catch (...) {
      ::testing::internal::GetCapturedStdout();
      throw;
    }
    ::testing::internal::GetCapturedStdout();
  }

  static void expect_message(const std::function<void()>& action, const std::vector<std::string>& needles,
                             const std::string& who) {
    try {
      action();
      ADD_FAILURE() << who << " accepted the crafted checkpoint";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::kCheckpoint) << who << ": " << error.what();
      for (const std::string& needle : needles) EXPECT_THAT(error.what(), HasSubstr(needle)) << who;
    }
  }

  // Refused by inspect, by a resume from its directory and by a resume from the file, each naming `needles`.
  void expect_refused(const std::string& file, const std::vector<std::string>& needles) {
    expect_message([&] { inspect(file); }, needles, "inspect");
    const std::string dir = std::filesystem::path(file).parent_path().string();
    auto trainer = testing::tiny_trainer(kSavedStep + 1);
    expect_message([&] { runtime::load_newest_valid(*trainer, dir, nullptr); }, needles, "directory resume");
    expect_message([&] { runtime::load_checkpoint(*trainer, file); }, needles, "file resume");
    EXPECT_EQ(trainer->steps_done(), 0u) << "a refused load changed the trainer";
  }

  // Refused by a directory resume, a file resume and the inference model's load, each naming `needles`. (`sluice
  // inspect` reads checksums and structure, not values: it lists such a file.)
  void expect_load_refused(const std::string& file, const std::vector<std::string>& needles) {
    const std::string dir = std::filesystem::path(file).parent_path().string();
    auto trainer = testing::tiny_trainer(kSavedStep + 1);
    expect_message([&] { runtime::load_newest_valid(*trainer, dir, nullptr); }, needles, "directory resume");
    expect_message([&] { runtime::load_checkpoint(*trainer, file); }, needles, "file resume");
    EXPECT_EQ(trainer->steps_done(), 0u) << "a refused load changed the trainer";
    runtime::InferenceModel model;
    expect_message([&] { model.load(file); }, needles, "inference model load");
    EXPECT_FALSE(model.loaded());
  }

  std::string dir_;
  std::string pristine_;
};

TEST_F(CraftedCheckpointTest, UnmodifiedFilePassesInspectAndResumes) {
  const std::string file = craft("unmodified", [](hid_t) {});
  inspect(file);
  auto trainer = testing::tiny_trainer(kSavedStep + 1);
  EXPECT_EQ(runtime::load_newest_valid(*trainer, std::filesystem::path(file).parent_path().string(), nullptr), file);
  EXPECT_EQ(trainer->steps_done(), static_cast<uint64_t>(kSavedStep));
  runtime::load_checkpoint(*trainer, file);
  testing::train_to_end(*trainer);
  EXPECT_EQ(trainer->steps_done(), static_cast<uint64_t>(kSavedStep + 1));
}

// The forge itself is sound: the same rewrite with a finite value loads everywhere (so the refusals below are about
// the values, not the checksums).
TEST_F(CraftedCheckpointTest, ForgedFiniteWeightWithRecomputedChecksumLoads) {
  const std::string file = craft("finite_weight", [](hid_t h) { forge_float(h, "/model/layer_0000/weight", 3, 0.5f); });
  inspect(file);
  auto trainer = testing::tiny_trainer(kSavedStep + 1);
  runtime::load_checkpoint(*trainer, file);
  EXPECT_EQ(trainer->steps_done(), static_cast<uint64_t>(kSavedStep));
  runtime::InferenceModel model;
  model.load(file);
  EXPECT_TRUE(model.loaded());
}

// The inference model refuses non-finite inputs (NUMERIC naming the sample) rather than predicting from them.
TEST_F(CraftedCheckpointTest, InferenceModelRefusesNonFiniteInputs) {
  runtime::InferenceModel model;
  model.load(pristine_);
  const int64_t in = model.input_features();
  std::vector<float> inputs(static_cast<size_t>(2 * in), 0.25f), outputs(2 * 64);
  inputs[static_cast<size_t>(in + 1)] = std::numeric_limits<float>::infinity();
  try {
    model.predict(inputs.data(), outputs.data(), 2);
    ADD_FAILURE() << "an Inf input was predicted from";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kNumeric) << error.what();
    EXPECT_THAT(error.what(), HasSubstr("non-finite value (inf) in the inputs of sample 1 (feature 1)"));
  }
  inputs[static_cast<size_t>(in + 1)] = 0.25f;
  model.predict(inputs.data(), outputs.data(), 2);
}

TEST_F(CraftedCheckpointTest, NanWeightWithRecomputedChecksumIsRefusedOnLoad) {
  const std::string file = craft("nan_weight", [](hid_t h) {
    forge_float(h, "/model/layer_0000/weight", 3, std::numeric_limits<float>::quiet_NaN());
  });
  expect_load_refused(file, {"dataset /model/layer_0000/weight", "non-finite value (nan)", "at index 3"});
}

TEST_F(CraftedCheckpointTest, InfBiasWithRecomputedChecksumIsRefusedOnLoad) {
  const std::string file = craft("inf_bias", [](hid_t h) {
    forge_float(h, "/model/layer_0003/bias", 1, -std::numeric_limits<float>::infinity());
  });
  expect_load_refused(file, {"dataset /model/layer_0003/bias", "non-finite value (-inf)", "at index 1"});
}

TEST_F(CraftedCheckpointTest, NanOrNegativeAdamMomentsWithRecomputedChecksumsAreRefusedOnResume) {
  const std::string nan_file = craft("nan_exp_avg", [](hid_t h) {
    forge_float(h, "/optimizer/layer_0000/weight/exp_avg", 0, std::numeric_limits<float>::quiet_NaN());
  });
  const std::string negative_file = craft("negative_exp_avg_sq", [](hid_t h) {
    forge_float(h, "/optimizer/layer_0000/weight/exp_avg_sq", 2, -1e-3f);
  });
  for (const auto& [file, needles] :
       std::vector<std::pair<std::string, std::vector<std::string>>>{
           {nan_file,
            {"dataset /optimizer/layer_0000/weight/exp_avg", "non-finite value (nan) in its values at index 0"}},
           {negative_file,
            {"dataset /optimizer/layer_0000/weight/exp_avg_sq", "negative value", "at index 2", "second moment"}}}) {
    auto trainer = testing::tiny_trainer(kSavedStep + 1);
    const std::string dir = std::filesystem::path(file).parent_path().string();
    expect_message([&] { runtime::load_newest_valid(*trainer, dir, nullptr); }, needles, "directory resume");
    expect_message([&] { runtime::load_checkpoint(*trainer, file); }, needles, "file resume");
    EXPECT_EQ(trainer->steps_done(), 0u) << "a refused load changed the trainer";
  }
}

TEST_F(CraftedCheckpointTest, SwappedSameShapeDatasetsWithTheirChecksumsAreRefused) {
  // gamma and beta of the layernorm are both [6]; each keeps its own (valid) crc32 attribute.
  const std::string file = craft("swapped", [](hid_t h) {
    swap_links(h, "/model/layer_0002/gamma", "/model/layer_0002/beta");
  });
  expect_refused(file, {"dataset /model/layer_0002/", "checksum mismatch", "does not belong to this path"});
}

TEST_F(CraftedCheckpointTest, SwappedOptimizerStatesAreRefused) {
  const std::string file = craft("swapped_state", [](hid_t h) {
    swap_links(h, "/optimizer/layer_0000/weight/exp_avg", "/optimizer/layer_0000/weight/exp_avg_sq");
  });
  expect_refused(file, {"dataset /optimizer/layer_0000/weight/exp_avg", "checksum mismatch"});
}

TEST_F(CraftedCheckpointTest, RenamedDatasetIsRefused) {
  const std::string file = craft("renamed", [](hid_t h) {
    ASSERT_GE(H5Lmove(h, "/model/layer_0000/weight", h, "/model/layer_0000/weights", H5P_DEFAULT, H5P_DEFAULT), 0);
  });
  expect_refused(file, {"dataset /model/layer_0000/weight", "manifest"});
}

TEST_F(CraftedCheckpointTest, ChangedDatatypeIsRefused) {
  const std::string file = craft("float64", [](hid_t h) { rewrite_as_float64(h, "/model/layer_0000/weight"); });
  expect_refused(file, {"dataset /model/layer_0000/weight", "float64", "the manifest lists float32"});
}

TEST_F(CraftedCheckpointTest, NegativeStepWithMatchingChecksumIsRefused) {
  const std::string file = craft("negative_step", [](hid_t h) {
    forge_train_value(h, "/train/step", -5, "/train/step|int64|");
  });
  expect_refused(file, {"dataset /train/step", "value -5", "allowed range [0, "});
}

TEST_F(CraftedCheckpointTest, AbsurdReplicaCountWithMatchingChecksumIsRefused) {
  const std::string file = craft("zero_replicas", [](hid_t h) {
    forge_train_value(h, "/train/accumulation_replicas", 0, "/train/accumulation_replicas|int64|");
  });
  expect_refused(file, {"dataset /train/accumulation_replicas", "value 0", "allowed range [1, "});
}

TEST_F(CraftedCheckpointTest, NegativeLearningRateOverrideIsRefused) {
  const std::string file = craft("negative_lr", [](hid_t h) {
    const double lr = -0.5;
    int64_t bits = 0;
    std::memcpy(&bits, &lr, sizeof bits);
    forge_train_value(h, "/train/lr_override_bits", bits, "/train/lr_override_bits|int64|");
  });
  expect_refused(file, {"dataset /train/lr_override_bits", "outside the allowed range"});
}

TEST_F(CraftedCheckpointTest, DatasetMissingFromTheFileIsRefused) {
  const std::string file = craft("missing", [](hid_t h) {
    ASSERT_GE(H5Ldelete(h, "/optimizer/layer_0003/bias/exp_avg", H5P_DEFAULT), 0);
  });
  expect_refused(file, {"dataset /optimizer/layer_0003/bias/exp_avg", "listed in the manifest but missing"});
}

TEST_F(CraftedCheckpointTest, DatasetBeyondTheManifestIsRefused) {
  const std::string file = craft("added", [](hid_t h) { add_unlisted_dataset(h, "/model/layer_0000/extra"); });
  expect_refused(file, {"dataset /model/layer_0000/extra", "not listed in the manifest"});
}

TEST_F(CraftedCheckpointTest, GroupBeyondTheManifestIsRefused) {
  const std::string file = craft("added_group", [](hid_t h) {
    H5Gclose(H5Gcreate2(h, "/model/layer_0009", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  });
  expect_refused(file, {"group /model/layer_0009", "not expected"});
}

TEST_F(CraftedCheckpointTest, VersionTwoFileWithoutItsManifestIsRefused) {
  // Without /manifest the file would otherwise read like a version-1 file with unbound checksums.
  const std::string file = craft("no_manifest", [](hid_t h) { ASSERT_GE(H5Ldelete(h, "/manifest", H5P_DEFAULT), 0); });
  expect_refused(file, {"dataset /manifest", "missing"});
}

TEST_F(CraftedCheckpointTest, ManifestEditedWithoutItsChecksumIsRefused) {
  // A dataset deleted together with its manifest line, the manifest's own crc32 left as it was.
  const std::string file = craft("edited_manifest", [](hid_t h) {
    const std::string victim = "/optimizer/layer_0003/bias/exp_avg|float32|2\n";  // [out] since version 3
    const hid_t manifest = H5Dopen2(h, "/manifest", H5P_DEFAULT);
    const hid_t type = H5Dget_type(manifest);
    std::string text(H5Tget_size(type), '\0');
    ASSERT_GE(H5Dread(manifest, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data()), 0);
    const size_t at = text.find(victim);
    ASSERT_NE(at, std::string::npos) << text;
    text.erase(at, victim.size());
    text.append(victim.size(), '\0');  // same fixed size, shorter string
    ASSERT_GE(H5Dwrite(manifest, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data()), 0);
    H5Tclose(type);
    H5Dclose(manifest);
    ASSERT_GE(H5Ldelete(h, "/optimizer/layer_0003/bias/exp_avg", H5P_DEFAULT), 0);
  });
  expect_refused(file, {"dataset /manifest", "checksum mismatch"});
}

// Root string attributes (format_version 2 lists each with its crc32 in /manifest): a flipped byte must not load
// or inspect as if fine.
TEST_F(CraftedCheckpointTest, FlippedByteInTheStoredConfigIsRefused) {
  const std::string file = craft("flipped_config", [](hid_t h) { flip_root_string_attribute(h, "config"); });
  expect_refused(file, {"root attribute config", "checksum mismatch", "attribute is corrupted"});
}

TEST_F(CraftedCheckpointTest, FlippedByteInCreatedByIsRefused) {
  const std::string file = craft("flipped_created_by", [](hid_t h) { flip_root_string_attribute(h, "created_by"); });
  expect_refused(file, {"root attribute created_by", "checksum mismatch"});
}

TEST_F(CraftedCheckpointTest, FlippedByteInTheOptimizerNameIsRefused) {
  const std::string file = craft("flipped_optimizer", [](hid_t h) { flip_root_string_attribute(h, "optimizer"); });
  expect_refused(file, {"root attribute optimizer", "checksum mismatch"});
}

TEST_F(CraftedCheckpointTest, FlippedByteInTheSavedLayoutIsRefused) {
  const std::string file = craft("flipped_stages", [](hid_t h) { flip_root_string_attribute(h, "layout_stages"); });
  expect_refused(file, {"root attribute layout_stages", "checksum mismatch"});
}

TEST_F(CraftedCheckpointTest, FormatVersionChangedToOneIsRefused) {
  // Read with the version-1 rules, the file would have no attribute checked.
  const std::string file = craft("downgraded", [](hid_t h) {
    const hid_t attribute = H5Aopen(h, "format_version", H5P_DEFAULT);
    const int64_t one = 1;
    ASSERT_GE(H5Awrite(attribute, H5T_NATIVE_INT64, &one), 0);
    H5Aclose(attribute);
  });
  expect_refused(file, {"root attribute format_version", "says version 1", "/manifest"});
}

TEST_F(CraftedCheckpointTest, RootAttributeBeyondTheManifestIsRefused) {
  const std::string file = craft("added_root_attribute", [](hid_t h) { add_string_attribute(h, "/", "notes"); });
  expect_refused(file, {"root attribute notes", "not listed in the manifest"});
}

TEST_F(CraftedCheckpointTest, GroupAttributeBeyondTheManifestIsRefused) {
  const std::string file = craft("added_group_attribute", [](hid_t h) { add_string_attribute(h, "/model", "x"); });
  expect_refused(file, {"object /model attribute x", "not listed in the manifest"});
}

TEST_F(CraftedCheckpointTest, DatasetAttributeBeyondTheManifestIsRefused) {
  const std::string file = craft("added_dataset_attribute", [](hid_t h) {
    add_string_attribute(h, "/model/layer_0000/weight", "units");
  });
  expect_refused(file, {"object /model/layer_0000/weight attribute units", "not listed in the manifest"});
}

TEST_F(CraftedCheckpointTest, DeletedRootAttributeIsRefused) {
  const std::string file = craft("deleted_attribute", [](hid_t h) { ASSERT_GE(H5Adelete(h, "created_by"), 0); });
  expect_refused(file, {"root attribute created_by", "listed in the manifest but missing"});
}

TEST_F(CraftedCheckpointTest, DatasetWithOtherMaximumDimensionsIsRefused) {
  // What a flipped bit in a dataspace's maximum dimensions looks like (red-team campaign, seed 15).
  const std::string file = craft("extendible", [](hid_t h) { make_extendible(h, "/model/layer_0000/weight"); });
  expect_refused(file, {"dataset /model/layer_0000/weight", "maximum dimensions [-1, 4]", "fixed-size"});
}

TEST_F(CraftedCheckpointTest, VersionOneFileWithNegativeStepIsRefused) {
  // The range checks apply to version-1 files too; their checksum covers the value's bytes alone.
  const std::string file = craft("v1_negative_step", testing::testdata_path("v1_1rank_ckpt_00000003.h5"),
                                 [](hid_t h) { forge_train_value(h, "/train/step", -5, ""); });
  expect_refused(file, {"dataset /train/step", "value -5", "allowed range [0, "});
}

}  // namespace
}  // namespace sluice::checkpoint
