// Reader::verify and Reader::read_box_into (what a load onto a pipeline.domain split uses for held samples):
// the streamed verification carries the crc32 across slabs of any size, down to one float, and finds a flipped
// byte anywhere; a box read returns exactly the box's values in row-major order and refuses a box that does not fit,
// naming file and dataset. The expected values are the formula below, not the reader's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "checkpoint/directory.h"
#include "checkpoint/format.h"
#include "checkpoint/reader.h"
#include "checkpoint/save.h"
#include "core/common/error.h"
#include "tests/checkpoint/checkpoint_test_support.h"

namespace sluice::checkpoint {
namespace {

using ::testing::HasSubstr;

const std::string kPath = "/samples/inputs";
const std::vector<int64_t> kDims = {3, 2, 5, 7};  // [held, C, D1, D2]

float value_at(int64_t index) { return 0.5f + static_cast<float>(index); }

class ReaderBoxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    dir_ = testing::make_shared_temp_dir(MPI_COMM_WORLD);
    file_ = dir_ + "/" + checkpoint_file_name(1);
    Snapshot mine;
    if (rank_ == 0) {
      std::vector<float> values(3 * 2 * 5 * 7);
      for (size_t i = 0; i < values.size(); ++i) values[i] = value_at(static_cast<int64_t>(i));
      mine.entries.push_back({kPath, kDims, values});
    }
    save(MPI_COMM_WORLD, file_, mine);
  }
  void TearDown() override {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank_ == 0) std::filesystem::remove_all(dir_);
  }

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

  // Flips one bit of float element `element` of kPath in the file (rank 0), found through HDF5 itself.
  void flip_element(int64_t element) {
    if (rank_ == 0) {
      const hid_t handle = H5Fopen(file_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
      const hid_t dataset = H5Dopen2(handle, kPath.c_str(), H5P_DEFAULT);
      const haddr_t offset = H5Dget_offset(dataset);
      H5Dclose(dataset);
      H5Fclose(handle);
      ASSERT_NE(offset, HADDR_UNDEF);
      std::string bytes = testing::read_file_bytes(file_);
      bytes.at(offset + static_cast<size_t>(element) * sizeof(float) + 1) ^= 0x04;
      testing::write_file_bytes(file_, bytes);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }

  int rank_ = 0;
  std::string dir_;
  std::string file_;
};

TEST_F(ReaderBoxTest, StreamedVerificationPassesForEverySlabSize) {
  const Reader reader(MPI_COMM_WORLD, file_);
  // One float, part of a line, several lines, one sample, more than the dataset: every cut of ChunkPlan.
  for (size_t slab : {size_t{4}, size_t{12}, size_t{60}, size_t{280}, size_t{1000}, Reader::kVerifySlabBytes}) {
    EXPECT_NO_THROW(reader.verify(kPath, slab)) << slab;
  }
  EXPECT_NO_THROW(verify_all(MPI_COMM_WORLD, file_));
}

TEST_F(ReaderBoxTest, AFlippedByteFailsTheStreamedVerificationForEverySlabSize) {
  flip_element(2 * 70 + 1 * 35 + 4 * 7 + 6);  // the last held sample, channel 1, point (4, 6): the very last value
  const Reader reader(MPI_COMM_WORLD, file_);
  for (size_t slab : {size_t{4}, size_t{12}, size_t{60}, size_t{280}, Reader::kVerifySlabBytes}) {
    expect_checkpoint_error([&] { reader.verify(kPath, slab); }, {"dataset " + kPath, "checksum mismatch"});
  }
  expect_checkpoint_error([&] { verify_all(MPI_COMM_WORLD, file_); }, {"dataset " + kPath, "checksum mismatch"});
}

TEST_F(ReaderBoxTest, ABoxReadReturnsTheBoxRowMajor) {
  const Reader reader(MPI_COMM_WORLD, file_);
  const std::vector<int64_t> offset = {0, 0, 1, 4}, extent = {3, 2, 3, 2};
  std::vector<float> got(3 * 2 * 3 * 2);
  reader.read_box_into(kPath, offset, extent, got.data(), got.size());
  std::vector<float> want;
  for (int64_t s = 0; s < 3; ++s) {
    for (int64_t c = 0; c < 2; ++c) {
      for (int64_t y = 1; y < 4; ++y) {
        for (int64_t x = 4; x < 6; ++x) want.push_back(value_at(((s * 2 + c) * 5 + y) * 7 + x));
      }
    }
  }
  EXPECT_EQ(got, want);
}

TEST_F(ReaderBoxTest, ABoxThatDoesNotFitIsRefusedNamingTheDataset) {
  const Reader reader(MPI_COMM_WORLD, file_);
  std::vector<float> room(64);
  expect_checkpoint_error([&] { reader.read_box_into(kPath, {0, 0, 3}, {3, 2, 2}, room.data(), 12); },
                          {"dataset " + kPath, "has 4 dimensions [3, 2, 5, 7], the box to read 3"});
  expect_checkpoint_error([&] { reader.read_box_into(kPath, {0, 0, 4, 6}, {3, 2, 2, 1}, room.data(), 12); },
                          {"dataset " + kPath, "leaves its shape [3, 2, 5, 7]"});
  expect_checkpoint_error([&] { reader.read_box_into(kPath, {0, 0, 0, 0}, {1, 2, 2, 2}, room.data(), 9); },
                          {"dataset " + kPath, "the box holds 8 values but the destination has room for 9"});
  expect_checkpoint_error([&] { reader.read_box_into("/samples/targets", {0}, {1}, room.data(), 1); },
                          {"dataset /samples/targets", "missing"});
}

}  // namespace
}  // namespace sluice::checkpoint
