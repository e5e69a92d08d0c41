// Damaged checkpoints must be refused with Error(kCheckpoint) naming the file and, where one is at fault, the
// dataset; never loaded half-way. Each test damages a freshly saved file on rank 0, then all ranks try to use it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>

#include <filesystem>
#include <functional>

#include "checkpoint/directory.h"
#include "checkpoint/format.h"
#include "checkpoint/layer_paths.h"
#include "checkpoint/reader.h"
#include "checkpoint/save.h"
#include "core/common/error.h"
#include "tests/checkpoint/checkpoint_test_support.h"

namespace sluice::checkpoint {
namespace {

using ::testing::HasSubstr;

constexpr int kLayers = 3;

class CorruptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    dir_ = testing::make_shared_temp_dir(MPI_COMM_WORLD);
    file_ = dir_ + "/" + checkpoint_file_name(1);
    save(MPI_COMM_WORLD, file_, testing::synthetic_snapshot(kLayers, size_, rank_));
  }
  void TearDown() override {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank_ == 0) std::filesystem::remove_all(dir_);
  }

  // Runs damage() on rank 0 only, after every rank's save finished and before any rank reads.
  void damage_on_rank_zero(const std::function<void()>& damage) {
    if (rank_ == 0) damage();
    MPI_Barrier(MPI_COMM_WORLD);
  }

  // Expects action() to throw kCheckpoint whose message names the file and every string in names.
  void expect_checkpoint_error(const std::function<void()>& action, const std::vector<std::string>& names) {
    try {
      action();
      ADD_FAILURE() << "expected Error(kCheckpoint)";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::kCheckpoint) << error.what();
      EXPECT_THAT(error.what(), HasSubstr(file_));
      for (const std::string& name : names) EXPECT_THAT(error.what(), HasSubstr(name));
    }
  }

  int rank_ = 0;
  int size_ = 1;
  std::string dir_;
  std::string file_;
};

// Where the raw data of a dataset starts in the file, found through HDF5 independently of the reader under test.
haddr_t data_offset(const std::string& file, const std::string& dataset_path) {
  const hid_t handle = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t dataset = H5Dopen2(handle, dataset_path.c_str(), H5P_DEFAULT);
  const haddr_t offset = H5Dget_offset(dataset);
  H5Dclose(dataset);
  H5Fclose(handle);
  return offset;
}

TEST_F(CorruptionTest, FlippedByteInDataIsCaughtByReadAndVerifyAll) {
  const std::string victim = model_path(1, "weight");
  damage_on_rank_zero([&] {
    const haddr_t offset = data_offset(file_, victim);
    ASSERT_NE(offset, HADDR_UNDEF);
    std::string bytes = testing::read_file_bytes(file_);
    bytes[offset + 5] = static_cast<char>(bytes[offset + 5] ^ 0x10);
    testing::write_file_bytes(file_, bytes);
  });
  expect_checkpoint_error([&] { verify_all(MPI_COMM_WORLD, file_); }, {victim, "checksum mismatch"});
  Reader reader(MPI_COMM_WORLD, file_);
  expect_checkpoint_error([&] { reader.read(victim); }, {victim, "checksum mismatch"});
  EXPECT_EQ(reader.read(model_path(1, "bias")).data, testing::expected_data(model_path(1, "bias")));
}

TEST_F(CorruptionTest, TruncatedFileIsRefusedOnOpen) {
  damage_on_rank_zero([&] {
    std::filesystem::resize_file(file_, std::filesystem::file_size(file_) - 100);
  });
  expect_checkpoint_error([&] { Reader reader(MPI_COMM_WORLD, file_); }, {"truncated"});
  expect_checkpoint_error([&] { verify_all(MPI_COMM_WORLD, file_); }, {"truncated"});
}

TEST_F(CorruptionTest, FileThatIsNotHdf5IsRefused) {
  damage_on_rank_zero([&] { testing::write_file_bytes(file_, std::string(4096, 'x')); });
  expect_checkpoint_error([&] { Reader reader(MPI_COMM_WORLD, file_); }, {"opening"});
}

TEST_F(CorruptionTest, MissingDatasetIsNamed) {
  Reader reader(MPI_COMM_WORLD, file_);
  const std::string absent = model_path(kLayers + 4, "weight");
  EXPECT_FALSE(reader.contains(absent));
  expect_checkpoint_error([&] { reader.read(absent); }, {absent, "missing"});
}

TEST_F(CorruptionTest, ShapeMismatchIsNamed) {
  Reader reader(MPI_COMM_WORLD, file_);
  const std::string path = model_path(0, "weight");
  expect_checkpoint_error([&] { reader.read(path, {4, 3}); }, {path, "[3, 4]", "[4, 3]"});
  EXPECT_EQ(reader.read(path, {3, 4}).data, testing::expected_data(path));
}

TEST_F(CorruptionTest, ReadIntoChecksTheDestinationSize) {
  Reader reader(MPI_COMM_WORLD, file_);
  const std::string path = model_path(2, "bias");
  std::vector<float> too_small(3);
  expect_checkpoint_error([&] { reader.read_into(path, too_small.data(), too_small.size()); }, {path, "room for 3"});
  std::vector<float> exact(4);
  reader.read_into(path, exact.data(), exact.size());
  EXPECT_EQ(exact, testing::expected_data(path));
}

TEST_F(CorruptionTest, UnsupportedFormatVersionIsRefused) {
  damage_on_rank_zero([&] {
    const hid_t handle = H5Fopen(file_.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    const hid_t attribute = H5Aopen(handle, kFormatVersionAttribute, H5P_DEFAULT);
    const int64_t future_version = kFormatVersion + 1;
    ASSERT_GE(H5Awrite(attribute, H5T_NATIVE_INT64, &future_version), 0);
    H5Aclose(attribute);
    H5Fclose(handle);
  });
  expect_checkpoint_error([&] { Reader reader(MPI_COMM_WORLD, file_); },
                          {"format_version", std::to_string(kFormatVersion + 1)});
}

}  // namespace
}  // namespace sluice::checkpoint
