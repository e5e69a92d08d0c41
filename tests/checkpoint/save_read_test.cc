// Collective save and read-back under any number of ranks (run with 1 and 2): disjoint layer ownership, reading
// back under the same and under a different layout (resharding), job metadata, errors agreed by all ranks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <filesystem>
#include <fstream>

#include "checkpoint/directory.h"
#include "checkpoint/format.h"
#include "checkpoint/layer_paths.h"
#include "checkpoint/reader.h"
#include "checkpoint/save.h"
#include "checkpoint/save_layout.h"
#include "core/common/error.h"
#include "tests/checkpoint/checkpoint_test_support.h"

namespace sluice::checkpoint {
namespace {

using ::testing::HasSubstr;
using testing::expected_data;
using testing::make_shared_temp_dir;
using testing::synthetic_snapshot;

constexpr int kLayers = 5;

class SaveReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    dir_ = make_shared_temp_dir(MPI_COMM_WORLD);
  }
  void TearDown() override {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank_ == 0) std::filesystem::remove_all(dir_);
  }
  std::string path_in_dir(const std::string& name) const { return dir_ + "/" + name; }

  int rank_ = 0;
  int size_ = 1;
  std::string dir_;
};

void expect_layer_matches_synthetic(const Reader& reader, int layer) {
  const std::vector<std::string> paths = reader.paths_of_layer(layer);
  ASSERT_EQ(paths.size(), 3u) << "layer " << layer;
  for (const std::string& path : paths) {
    const Entry entry = reader.read(path);
    EXPECT_EQ(entry.data, expected_data(path)) << path;
  }
}

TEST_F(SaveReadTest, RoundTripWithEachRankReadingTheLayersItWrote) {
  const std::string file = path_in_dir(checkpoint_file_name(10));
  save(MPI_COMM_WORLD, file, synthetic_snapshot(kLayers, size_, rank_));

  Reader reader(MPI_COMM_WORLD, file);
  EXPECT_EQ(reader.format_version(), kFormatVersion);
  EXPECT_EQ(reader.layer_indices(), std::vector<int>({0, 1, 2, 3, 4}));
  EXPECT_EQ(reader.paths().size(), static_cast<size_t>(kLayers * 3));
  for (int layer = rank_; layer < kLayers; layer += size_) expect_layer_matches_synthetic(reader, layer);
  EXPECT_EQ(reader.dims(model_path(2, "weight")), std::vector<int64_t>({3, 4}));
  EXPECT_EQ(reader.dims(model_path(2, "bias")), std::vector<int64_t>({4}));
}

TEST_F(SaveReadTest, ReshardsToOneRankReadingEveryLayer) {
  const std::string file = path_in_dir(checkpoint_file_name(20));
  save(MPI_COMM_WORLD, file, synthetic_snapshot(kLayers, size_, rank_));
  if (rank_ == 0) {
    Reader reader(MPI_COMM_SELF, file);
    for (int layer = 0; layer < kLayers; ++layer) expect_layer_matches_synthetic(reader, layer);
  }
}

TEST_F(SaveReadTest, ReshardsToAShiftedOwnership) {
  const std::string file = path_in_dir(checkpoint_file_name(30));
  save(MPI_COMM_WORLD, file, synthetic_snapshot(kLayers, size_, rank_));
  // New layout: contiguous blocks instead of round-robin, so (with 2 ranks) most layers change owner.
  Reader reader(MPI_COMM_WORLD, file);
  const int per_rank = (kLayers + size_ - 1) / size_;
  for (int layer = rank_ * per_rank; layer < std::min(kLayers, (rank_ + 1) * per_rank); ++layer) {
    expect_layer_matches_synthetic(reader, layer);
  }
}

// Rank 0 writes every dataset, receiving the other ranks' in pieces of at most chunk_bytes: 8 bytes cuts the 3x4
// tensors into rows and each row into halves, so a misplaced piece or a lost one shows as a wrong value.
TEST_F(SaveReadTest, SmallChunksWriteTheSameData) {
  for (const size_t chunk_bytes : {size_t{8}, size_t{12}, size_t{16}, size_t{40}}) {
    const std::string file = path_in_dir(checkpoint_file_name(40 + static_cast<int64_t>(chunk_bytes)));
    Snapshot mine = synthetic_snapshot(kLayers, size_, rank_);
    mine.entries.push_back({application_path("counts", rank_), {2, 3, 2}, {}});
    Entry& counts = mine.entries.back();
    counts.type = DataType::kInt64;
    for (int64_t i = 0; i < 12; ++i) {
      const int64_t value = 1000 * rank_ + i;
      const auto* bytes = reinterpret_cast<const unsigned char*>(&value);
      counts.bytes.insert(counts.bytes.end(), bytes, bytes + sizeof value);
    }
    SaveOptions options;
    options.chunk_bytes = chunk_bytes;
    save(MPI_COMM_WORLD, file, mine, options);
    Reader reader(MPI_COMM_WORLD, file);
    for (int layer = 0; layer < kLayers; ++layer) expect_layer_matches_synthetic(reader, layer);
    for (int rank = 0; rank < size_; ++rank) {
      const std::string path = application_path("counts", rank);
      ASSERT_EQ(reader.application_dims(path), (std::vector<int64_t>{2, 3, 2})) << "chunk_bytes " << chunk_bytes;
      std::vector<int64_t> values(12, -1);
      reader.read_application(path, DataType::kInt64, values.data(), values.size());
      for (size_t i = 0; i < 12; ++i) {
        const int64_t value = values[i];
        EXPECT_EQ(value, 1000 * rank + static_cast<int64_t>(i)) << "chunk_bytes " << chunk_bytes << " element " << i;
      }
    }
  }
}

TEST_F(SaveReadTest, ChunkSizeOutOfRangeThrowsOnEveryRank) {
  SaveOptions options;
  options.chunk_bytes = 4;
  try {
    save(MPI_COMM_WORLD, path_in_dir("tiny_chunks.h5"), synthetic_snapshot(kLayers, size_, rank_), options);
    ADD_FAILURE() << "save must throw";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
    EXPECT_THAT(error.what(), HasSubstr("chunk_bytes"));
  }
  EXPECT_FALSE(std::filesystem::exists(path_in_dir("tiny_chunks.h5")));
}

TEST_F(SaveReadTest, KeepsTrainValuesAndAttributesFromRankZero) {
  Snapshot mine = synthetic_snapshot(kLayers, size_, rank_);
  if (rank_ == 0) {
    mine.train_ints = {{"step", 1234}, {"seed", -7}, {"data_position", int64_t{1} << 40}};
    mine.attributes = {{"config", "model:\n  layers: 5\n"}, {"created_by", "sluice test"}};
    add_layout_attributes({4, 2, 1, 8, "1f1b"}, mine.attributes);
  }
  const std::string file = path_in_dir(checkpoint_file_name(1234));
  save(MPI_COMM_WORLD, file, mine);

  Reader reader(MPI_COMM_WORLD, file);
  EXPECT_EQ(reader.train_int("step"), 1234);
  EXPECT_EQ(reader.train_int("seed"), -7);
  EXPECT_EQ(reader.train_int("data_position"), int64_t{1} << 40);
  EXPECT_EQ(reader.attributes().at("config"), "model:\n  layers: 5\n");
  EXPECT_EQ(reader.attributes().at("created_by"), "sluice test");
  const auto layout = layout_from_attributes(reader.attributes(), reader.file());
  ASSERT_TRUE(layout.has_value());
  EXPECT_EQ(layout->stages, 4);
  EXPECT_EQ(layout->data_parallel, 2);
  EXPECT_EQ(layout->world, 8);
  EXPECT_EQ(layout->schedule, "1f1b");
  try {
    reader.train_int("epoch");
    ADD_FAILURE() << "missing train value must throw";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kCheckpoint);
    EXPECT_THAT(error.what(), HasSubstr("/train/epoch"));
  }
}

TEST_F(SaveReadTest, DimsNotMatchingDataThrowOnEveryRank) {
  Snapshot mine = synthetic_snapshot(kLayers, size_, rank_);
  if (rank_ == size_ - 1) mine.entries.push_back({model_path(99, "weight"), {2, 2}, {1.0f, 2.0f, 3.0f}});
  try {
    save(MPI_COMM_WORLD, path_in_dir("bad.h5"), mine);
    ADD_FAILURE() << "save must throw";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
    EXPECT_THAT(error.what(), HasSubstr("/model/layer_0099/weight"));
  }
  EXPECT_FALSE(std::filesystem::exists(path_in_dir("bad.h5")));
}

TEST_F(SaveReadTest, PathContributedByTwoRanksThrowsOnEveryRank) {
  if (size_ < 2) GTEST_SKIP() << "needs 2 ranks";
  Snapshot mine;
  mine.entries.push_back({model_path(0, "weight"), {1}, {static_cast<float>(rank_)}});
  try {
    save(MPI_COMM_WORLD, path_in_dir("clash.h5"), mine);
    ADD_FAILURE() << "save must throw";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
    EXPECT_THAT(error.what(), HasSubstr("/model/layer_0000/weight"));
  }
}

TEST_F(SaveReadTest, MissingDirectoryThrowsNamingIt) {
  try {
    save(MPI_COMM_WORLD, path_in_dir("no_such_dir/ckpt.h5"), synthetic_snapshot(kLayers, size_, rank_));
    ADD_FAILURE() << "save must throw";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kCheckpoint);
    EXPECT_THAT(error.what(), HasSubstr("no_such_dir"));
  }
}

TEST_F(SaveReadTest, DirectoryMeansItsLatestCheckpoint) {
  Snapshot mine = synthetic_snapshot(kLayers, size_, rank_);
  for (int64_t step : {5, 15}) {
    if (rank_ == 0) mine.train_ints["step"] = step;
    save(MPI_COMM_WORLD, path_in_dir(checkpoint_file_name(step)), mine);
  }
  Reader reader(MPI_COMM_WORLD, dir_);
  EXPECT_EQ(reader.file(), path_in_dir(checkpoint_file_name(15)));
  EXPECT_EQ(reader.train_int("step"), 15);
}

TEST_F(SaveReadTest, SaveKilledBeforeRenameLeavesPreviousCheckpointLatest) {
  const std::string complete = path_in_dir(checkpoint_file_name(100));
  save(MPI_COMM_WORLD, complete, synthetic_snapshot(kLayers, size_, rank_));
  if (rank_ == 0) {
    // What a kill -9 mid-save leaves behind: a partial temporary of a newer step, never renamed.
    const std::string bytes = testing::read_file_bytes(complete);
    testing::write_file_bytes(temporary_path(path_in_dir(checkpoint_file_name(200)), "4242"),
                              bytes.substr(0, bytes.size() / 2));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(latest_in_dir(dir_), complete);
  verify_all(MPI_COMM_WORLD, dir_);
  Reader reader(MPI_COMM_WORLD, dir_);
  expect_layer_matches_synthetic(reader, kLayers - 1);
}

TEST_F(SaveReadTest, H5dumpShowsTheDocumentedLayout) {
  Snapshot mine = synthetic_snapshot(kLayers, size_, rank_);
  if (rank_ == 0) {
    mine.train_ints = {{"step", 77}};
    mine.attributes = {{"created_by", "h5dump test"}};
  }
  const std::string file = path_in_dir(checkpoint_file_name(77));
  save(MPI_COMM_WORLD, file, mine);
  if (rank_ != 0) return;
  const std::string listing = path_in_dir("h5dump.txt");
  const std::string command = "h5dump -H '" + file + "' > '" + listing + "' 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << "h5dump failed: " << testing::read_file_bytes(listing);
  const std::string dump = testing::read_file_bytes(listing);
  for (const char* expected :
       {"GROUP \"model\"", "GROUP \"optimizer\"", "GROUP \"accumulation\"", "GROUP \"train\"",
        "GROUP \"layer_0000\"", "GROUP \"layer_0004\"", "DATASET \"weight\"", "DATASET \"bias\"",
        "DATASET \"exp_avg\"", "DATASET \"step\"", "ATTRIBUTE \"crc32\"", "ATTRIBUTE \"format_version\"",
        "ATTRIBUTE \"created_by\"", "H5T_IEEE_F32LE", "SIMPLE { ( 3, 4 ) / ( 3, 4 ) }"}) {
    EXPECT_THAT(dump, HasSubstr(expected));
  }
}

}  // namespace
}  // namespace sluice::checkpoint
