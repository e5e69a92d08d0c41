// A rank that stops (SIGSTOP) during a checkpoint save: every live rank's save ends with TIMEOUT naming it, within
// a stated bound, while the waiting ranks sleep (comm.wait: block; CPU time from getrusage). Runs with 3 ranks,
// one scenario per target (--gtest_filter): which rank stops, and where.
//  - a rank other than 0 stops after the metadata, before it has sent anything: rank 0 times out waiting for its
//    first chunk (one timeout), then the agreement names it (one more): under 2 x timeout + slack;
//  - rank 0, the writer, stops there: the others time out waiting for its progress messages (one timeout), then
//    for its verdict (2.5 x timeout + 1 s): under 3.5 x timeout + 1 s + slack;
//  - a rank never enters save (stopped before the call): the first agreement names it: under a timeout + slack.
// The stopped rank is continued afterwards and its own save fails too (it missed the others' agreement).
#include <gtest/gtest.h>
#include <mpi.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "checkpoint/save.h"
#include "core/comm/wait_settings.h"
#include "core/common/error.h"
#include "tests/checkpoint/checkpoint_test_support.h"

namespace sluice::checkpoint {
namespace {

constexpr double kTimeout = 2.0;
constexpr double kSlack = 4.0;  // start-up of the wait, a loaded 2-core test machine

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + 1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

enum class StopPoint { kBeforeDataTransfer, kBeforeSave };

class SaveStoppedRank : public ::testing::Test {
 protected:
  void SetUp() override {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    ASSERT_EQ(size_, 3) << "this test needs 3 ranks";
    comm::set_wait_settings({kTimeout, 0.0, comm::WaitPolicy::kBlock});
    dir_ = testing::make_shared_temp_dir(MPI_COMM_WORLD);
    const int pid = getpid();
    pids_.resize(static_cast<size_t>(size_));
    MPI_Allgather(&pid, 1, MPI_INT, pids_.data(), 1, MPI_INT, MPI_COMM_WORLD);
  }

  // Saves with rank `stopped` stopping at `where`; checks what the live ranks get within `bound` seconds.
  void run(int stopped, StopPoint where, double bound) {
    const std::string file = dir_ + "/ckpt_00000001.h5";
    const Snapshot mine = testing::synthetic_snapshot(6, size_, rank_);
    SaveOptions options;
    options.chunk_bytes = 16;  // several chunks per tensor: the stop falls between requests
    if (rank_ == stopped && where == StopPoint::kBeforeDataTransfer)
      options.before_data_transfer = [] { raise(SIGSTOP); };
    if (rank_ == stopped && where == StopPoint::kBeforeSave) raise(SIGSTOP);

    const auto t0 = std::chrono::steady_clock::now();
    const double cpu0 = cpu_seconds();
    ErrorCode code = ErrorCode::kInternal;
    std::string message = "save returned without an error";
    try {
      save(MPI_COMM_WORLD, file, mine, options);
    } catch (const Error& error) {
      code = error.code();
      message = error.what();
    }
    const double cpu = cpu_seconds() - cpu0;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rank_ == (stopped + 1) % size_) kill(pids_[static_cast<size_t>(stopped)], SIGCONT);  // let it finish the test

    std::printf("rank %d: after %.2f s using %.3f CPU-s: %s\n", rank_, seconds, cpu, message.c_str());
    EXPECT_EQ(code, ErrorCode::kTimeout) << message;
    if (rank_ == stopped) return;  // continued long after the others gave up: its own wait or theirs timed out
    EXPECT_NE(message.find("rank " + std::to_string(stopped)), std::string::npos) << message;
    EXPECT_GE(seconds, kTimeout - 0.1) << message;
    EXPECT_LT(seconds, bound) << message;
    // comm.wait: block sleeps while waiting; a spinning rank would burn about `seconds` CPU-seconds.
    EXPECT_LT(cpu, 0.3 + 0.05 * seconds) << "waited " << seconds << " s and used " << cpu << " CPU-s";
    EXPECT_FALSE(std::filesystem::exists(file));
  }

  int rank_ = 0;
  int size_ = 1;
  std::string dir_;
  std::vector<int> pids_;
};

TEST_F(SaveStoppedRank, SenderStoppedBeforeSendingIsNamedByEveryLiveRank) {
  run(2, StopPoint::kBeforeDataTransfer, 2 * kTimeout + kSlack);
}

TEST_F(SaveStoppedRank, WriterStoppedIsNamedByEveryLiveRank) {
  run(0, StopPoint::kBeforeDataTransfer, 3.5 * kTimeout + 1.0 + kSlack);
}

TEST_F(SaveStoppedRank, RankThatNeverEntersSaveIsNamedByEveryLiveRank) {
  run(1, StopPoint::kBeforeSave, kTimeout + kSlack);
}

}  // namespace
}  // namespace sluice::checkpoint
