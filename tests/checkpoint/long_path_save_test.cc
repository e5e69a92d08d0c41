// Saving into a directory whose path is long: Open MPI 4.1's lockedfile shared-file-pointer component formats the
// file name into a fixed buffer and aborted the process ("buffer overflow detected") from about 240 characters on,
// inside MPI_File_open under H5Fcreate. Paths up to PATH_MAX must save and read back. Runs with 1 and 2 ranks.
#include <gtest/gtest.h>
#include <limits.h>
#include <mpi.h>

#include <filesystem>
#include <string>

#include "checkpoint/reader.h"
#include "checkpoint/save.h"
#include "tests/checkpoint/checkpoint_test_support.h"

namespace sluice::checkpoint {
namespace {

using testing::expected_data;
using testing::make_shared_temp_dir;
using testing::synthetic_snapshot;

// A directory under `base` whose path is about `length` characters (components of 200).
std::string long_directory(const std::string& base, std::size_t length) {
  std::string dir = base;
  while (dir.size() + 201 < length) dir += "/" + std::string(200, 'd');
  dir += "/" + std::string(length - dir.size() - 1, 'e');
  return dir;
}

TEST(LongPathSave, SavesAndReadsBackNearPathMax) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string base = make_shared_temp_dir(MPI_COMM_WORLD);
  for (const std::size_t length : {std::size_t{250}, std::size_t{1000}, std::size_t{PATH_MAX - 40}}) {
    const std::string dir = long_directory(base, length);
    if (rank == 0) std::filesystem::create_directories(dir);
    MPI_Barrier(MPI_COMM_WORLD);
    const std::string file = dir + "/ckpt_00000001.h5";
    save(MPI_COMM_WORLD, file, synthetic_snapshot(2, size, rank));
    const Reader reader(MPI_COMM_WORLD, file);
    EXPECT_EQ(reader.file(), file);
    for (const std::string& path : reader.paths()) EXPECT_EQ(reader.read(path).data, expected_data(path)) << path;
  }
}

}  // namespace
}  // namespace sluice::checkpoint
