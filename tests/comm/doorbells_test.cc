// Doorbells (core/comm/bell.h, doorbells.h): a sleeper wakes at a ring, from another thread, another process and
// another MPI rank, and not without one; the set-up leaves nothing in /dev/shm; the pipeline's transport rings
// the receiver when it sends. Waits are bounded by kLong: a ring that does not wake its sleeper makes the sleep
// last kLong, which the checks below tell from a wake-up (they bound it at half of kLong, not a speed target).
// Run with 2 ranks.
#include <dirent.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "core/comm/bell.h"
#include "core/comm/doorbells.h"
#include "core/comm/mpi_transport.h"
#include "tests/mpi_world.h"

namespace sluice::comm {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::microseconds kLong{20'000'000};  // 20 s

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void wait_for_sleeper(const BellWord& bell) {
  while (bell.sleepers.load() == 0) std::this_thread::yield();
}

TEST(Bell, ARingFromAnotherThreadWakesTheSleeper) {
  BellWord bell;
  const uint32_t seen = bell.rings.load();
  std::thread ringer([&] {
    wait_for_sleeper(bell);
    ring_bell(bell);
  });
  const auto start = Clock::now();
  EXPECT_TRUE(sleep_on_bell(bell, seen, kLong));
  EXPECT_LT(seconds_since(start), 10.0) << "the ring did not end the sleep: it ran to its bound";
  ringer.join();
}

TEST(Bell, ARingBeforeTheSleepIsNotLost) {
  BellWord bell;
  const uint32_t seen = bell.rings.load();
  ring_bell(bell);  // between the caller's poll and its sleep
  const auto start = Clock::now();
  EXPECT_TRUE(sleep_on_bell(bell, seen, kLong));
  EXPECT_LT(seconds_since(start), 10.0);
}

TEST(Bell, WithoutARingTheSleepEndsAtItsBound) {
  BellWord bell;
  EXPECT_FALSE(sleep_on_bell(bell, bell.rings.load(), std::chrono::microseconds(2000)));
  EXPECT_EQ(bell.sleepers.load(), 0u);
}

TEST(Bell, ARingFromAnotherProcessWakesTheSleeper) {
  if (sluice::testing::world_rank() != 0) GTEST_SKIP() << "rank 0 forks";
  void* memory = mmap(nullptr, sizeof(BellWord), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(memory, MAP_FAILED);
  auto* bell = new (memory) BellWord;
  const uint32_t seen = bell->rings.load();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    wait_for_sleeper(*bell);
    ring_bell(*bell);
    _exit(0);
  }
  const auto start = Clock::now();
  EXPECT_TRUE(sleep_on_bell(*bell, seen, kLong));
  EXPECT_LT(seconds_since(start), 10.0) << "a process-private futex would not see the other process's ring";
  int status = 0;
  waitpid(child, &status, 0);
  munmap(memory, sizeof(BellWord));
}

std::vector<std::string> bell_segments_in_dev_shm() {
  std::vector<std::string> found;
  if (DIR* dir = opendir("/dev/shm")) {
    while (dirent* entry = readdir(dir)) {
      const std::string name = entry->d_name;
      if (name.rfind("sluice-bells-", 0) == 0) found.push_back(name);
    }
    closedir(dir);
  }
  return found;
}

TEST(Doorbells, ARankWakesAtItsPeersRingAndNothingIsLeftInDevShm) {
  Doorbells bells(MPI_COMM_WORLD);
  const int rank = sluice::testing::world_rank();
  ASSERT_NE(bells.mine(), nullptr) << "no shared memory for the bells on this machine";
  EXPECT_TRUE(bell_segments_in_dev_shm().empty()) << "the segment stays linked after the set-up";
  const uint32_t seen = bells.mine()->rings.load();
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) {
    // Rank 0 may be asleep or not yet: either way its sleep must end at this ring (the thread and process cases
    // above ring a sleeper that is known to sleep).
    bells.ring(0);
  } else {
    const auto start = Clock::now();
    EXPECT_TRUE(sleep_on_bell(*bells.mine(), seen, kLong));
    EXPECT_LT(seconds_since(start), 10.0);
  }
  bells.ring(-1);  // outside the communicator: nothing
  bells.ring(2);
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(Doorbells, TheTransportRingsTheReceiverWhenItSendsAndTheSenderWhenItReceives) {
  MpiTransport transport(MPI_COMM_WORLD);
  const int rank = transport.rank();
  std::vector<float> data(8192, static_cast<float>(rank + 1));  // 32 KiB: past shared memory's eager limit
  const uint32_t before = transport.rings_received();
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    transport.isend(data.data(), static_cast<int64_t>(data.size()), 1, 7)->wait();
  } else {
    transport.irecv(data.data(), static_cast<int64_t>(data.size()), 0, 7)->wait();
    EXPECT_EQ(data[0], 1.0f);
    EXPECT_EQ(data.back(), 1.0f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  // Rank 1 was rung by rank 0's send; rank 0 by rank 1's completed receive.
  EXPECT_GE(transport.rings_received() - before, 1u) << "rank " << rank << " was never rung";
}

}  // namespace
}  // namespace sluice::comm
