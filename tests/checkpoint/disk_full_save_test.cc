// A save that runs out of space (issue 28: ENOSPC on a full disk) fails with an error, and the process lives on:
// a later save elsewhere succeeds and MPI_Finalize (where parallel HDF5 shuts itself down) does not crash. The
// crash came from HDF5: a failed H5Fclose leaves a half-closed file in its tables, which HDF5's termination
// (run by MPI_Finalize) closes again and segfaults on. A full disk is simulated by the pwrite/write below, which
// this executable defines and so interposes for libhdf5: a write into a file under the "full" directory that
// would take it past a byte budget fails with ENOSPC, as on a full file system, without a mount.
// Runs with 1 and 2 ranks; rank 0 writes the file. The test binary's own exit (MPI_Finalize in
// tests/mpi_gtest_main.cc) is part of the test: before the fix it died there with SIGSEGV.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "checkpoint/layer_paths.h"
#include "checkpoint/reader.h"
#include "checkpoint/save.h"
#include "core/common/error.h"
#include "tests/checkpoint/checkpoint_test_support.h"

namespace {

// The simulated full file system: files under g_full_dir hold at most g_budget bytes ("" = off).
std::string g_full_dir;
off_t g_budget = 0;

bool past_budget(int fd, off_t end) {
  if (g_full_dir.empty() || end <= g_budget) return false;
  char target[PATH_MAX] = {};
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t length = readlink(link.c_str(), target, sizeof(target) - 1);
  return length > 0 && std::string(target, static_cast<size_t>(length)).rfind(g_full_dir, 0) == 0;
}

template <typename Function>
Function next_definition(const char* name) {
  return reinterpret_cast<Function>(dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" ssize_t pwrite(int fd, const void* buffer, size_t count, off_t offset) {
  if (past_budget(fd, offset + static_cast<off_t>(count))) {
    errno = ENOSPC;
    return -1;
  }
  static const auto real = next_definition<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite");
  return real(fd, buffer, count, offset);
}

extern "C" ssize_t pwrite64(int fd, const void* buffer, size_t count, off_t offset) {
  return pwrite(fd, buffer, count, offset);
}

extern "C" ssize_t write(int fd, const void* buffer, size_t count) {
  if (!g_full_dir.empty() && past_budget(fd, lseek(fd, 0, SEEK_CUR) + static_cast<off_t>(count))) {
    errno = ENOSPC;
    return -1;
  }
  static const auto real = next_definition<ssize_t (*)(int, const void*, size_t)>("write");
  return real(fd, buffer, count);
}

namespace sluice::checkpoint {
namespace {

using testing::make_shared_temp_dir;
using testing::synthetic_snapshot;

int world(int (*query)(MPI_Comm, int*)) {
  int value = 0;
  query(MPI_COMM_WORLD, &value);
  return value;
}

// Makes the directory `dir` a full file system holding `bytes` per file until destroyed.
class FullDirectory {
 public:
  FullDirectory(const std::string& dir, off_t bytes) {
    g_budget = bytes;
    g_full_dir = std::filesystem::canonical(dir).string() + "/";
  }
  ~FullDirectory() { g_full_dir.clear(); }
  FullDirectory(const FullDirectory&) = delete;
  FullDirectory& operator=(const FullDirectory&) = delete;
};

// 60 small layers (a few hundred objects, so the file's metadata alone is well past the smaller limits) and 8
// layers of 64 x 64 weights, as a real model has: their bytes pass through HDF5's sieve buffer, whose last part is
// written when the dataset closes.
Snapshot model_like_snapshot(int ranks, int rank) {
  Snapshot snapshot = synthetic_snapshot(60, ranks, rank);
  for (int layer = 60 + rank; layer < 68; layer += ranks) {
    std::vector<float> values(64 * 64);
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(layer) + 0.001f * static_cast<float>(i);
    snapshot.entries.push_back({model_path(layer, "weight"), {64, 64}, values});
  }
  return snapshot;
}

TEST(DiskFullSave, AFailedSaveIsAnErrorAndTheNextSaveAndFinalizeWork) {
  const std::string dir = make_shared_temp_dir(MPI_COMM_WORLD);
  const int ranks = world(MPI_Comm_size), rank = world(MPI_Comm_rank);
  const Snapshot snapshot = model_like_snapshot(ranks, rank);
  const std::string full = dir + "/full";
  if (rank == 0) std::filesystem::create_directories(full);
  // Budgets inside the metadata, and inside the datasets' bytes (half and 90 % of a whole file): there the last
  // bytes of a dataset are written when it closes, a failure the save once ignored (redteam's disk-full campaign:
  // success reported, a file with a hole left under the final name).
  const std::string sizing = dir + "/sizing.h5";
  save(MPI_COMM_WORLD, sizing, snapshot);
  const auto whole = static_cast<off_t>(std::filesystem::file_size(sizing));
  for (off_t budget : {off_t{4096}, off_t{20000}, off_t{60000}, whole / 2, whole * 9 / 10}) {
    SCOPED_TRACE("bytes free " + std::to_string(budget));
    const std::string path = full + "/ckpt_" + std::to_string(budget) + ".h5";
    bool failed = false;
    {
      const FullDirectory disk(rank == 0 ? full : dir, rank == 0 ? budget : 1 << 30);
      try {
        save(MPI_COMM_WORLD, path, snapshot);
      } catch (const Error& error) {
        failed = true;
        EXPECT_TRUE(error.code() == ErrorCode::kCheckpoint || error.code() == ErrorCode::kIo) << error.what();
        if (rank == 0) EXPECT_NE(std::string(error.what()).find("No space left on device"), std::string::npos) << error.what();
      }
    }
    EXPECT_TRUE(failed) << "a save into a full directory succeeded";
    EXPECT_FALSE(std::filesystem::exists(path)) << "an incomplete checkpoint took the final name";
  }
  // The process is still sound: the next save (elsewhere, with room) works and reads back.
  const std::string good = dir + "/good.h5";
  save(MPI_COMM_WORLD, good, snapshot);
  if (rank == 0) Reader(good).verify_all();
}

}  // namespace
}  // namespace sluice::checkpoint
