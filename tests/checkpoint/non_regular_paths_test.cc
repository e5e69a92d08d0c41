// A checkpoint path that exists but is not a regular file: a save must refuse to replace it (the final rename
// would otherwise swap /dev/full, a FIFO or a directory for a checkpoint file), and reading one (a Reader: what
// `sluice inspect` and `--resume` use) must refuse before opening it, because opening a FIFO blocks until a writer
// appears. Long paths are cut in messages. Runs with 1 and 2 ranks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "checkpoint/directory.h"
#include "checkpoint/reader.h"
#include "checkpoint/save.h"
#include "core/common/error.h"
#include "tests/checkpoint/checkpoint_test_support.h"

namespace sluice::checkpoint {
namespace {

using ::testing::HasSubstr;
using testing::make_shared_temp_dir;
using testing::synthetic_snapshot;

int rank_of_world() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int size_of_world() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// The message of the Error(kCheckpoint) that `call` throws on every rank.
template <typename Call>
std::string checkpoint_error(Call call) {
  try {
    call();
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kCheckpoint) << error.what();
    return error.what();
  }
  ADD_FAILURE() << "expected an error";
  return "";
}

class NonRegularPaths : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = make_shared_temp_dir(MPI_COMM_WORLD);
    // A test that blocks in an open of a FIFO would otherwise hang until Bazel's timeout.
    alarm(60);
  }
  void TearDown() override { alarm(0); }
  void save_to(const std::string& path) {
    save(MPI_COMM_WORLD, path, synthetic_snapshot(2, size_of_world(), rank_of_world()));
  }
  std::string dir_;
};

TEST_F(NonRegularPaths, ASaveNeverReplacesADeviceAFifoOrADirectory) {
  EXPECT_THAT(checkpoint_error([&] { save_to("/dev/full"); }),
              HasSubstr("cannot save checkpoint '/dev/full': it exists and is a character device"));
  const std::string fifo = dir_ + "/ckpt_00000001.h5";
  if (rank_of_world() == 0) {
    EXPECT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_THAT(checkpoint_error([&] { save_to(fifo); }), HasSubstr("it exists and is a FIFO"));
  EXPECT_EQ(non_regular_kind(fifo), "a FIFO") << "the FIFO was replaced";
  const std::string directory = dir_ + "/ckpt_00000002.h5";
  if (rank_of_world() == 0) std::filesystem::create_directory(directory);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_THAT(checkpoint_error([&] { save_to(directory); }), HasSubstr("it exists and is a directory"));
  // A regular file is replaced as before.
  save_to(dir_ + "/ckpt_00000003.h5");
  save_to(dir_ + "/ckpt_00000003.h5");
}

TEST_F(NonRegularPaths, ReadingAFifoIsRefusedWithoutBlocking) {
  const std::string fifo = dir_ + "/waiting.h5";
  if (rank_of_world() == 0) {
    EXPECT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_THAT(checkpoint_error([&] { Reader reader(MPI_COMM_WORLD, fifo); }),
              HasSubstr("checkpoint '" + fifo + "', file: is a FIFO, not a checkpoint file"));
  EXPECT_THAT(checkpoint_error([&] { Reader reader(fifo); }), HasSubstr("is a FIFO"));
  EXPECT_THAT(checkpoint_error([&] { Reader reader(MPI_COMM_WORLD, "/dev/null"); }),
              HasSubstr("is a character device"));
}

TEST_F(NonRegularPaths, AHugePathIsCutInTheMessage) {
  const std::string huge = dir_ + "/" + std::string(1 << 20, 'x') + "/end.h5";
  const std::string message = checkpoint_error([&] { Reader reader(MPI_COMM_WORLD, huge); });
  EXPECT_LT(message.size(), 2000u) << message.substr(0, 300);
  EXPECT_THAT(message, HasSubstr(" characters cut)..."));
  EXPECT_THAT(message, HasSubstr("/end.h5'"));
}

}  // namespace
}  // namespace sluice::checkpoint
