// comm::run_bounded_or_exit, the bound on MPI_Finalize: without MPI (the action stands in for it).
#include "core/comm/bounded_finalize.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace sluice::comm {
namespace {

TEST(RunBoundedOrExit, AnActionThatReturnsRunsOnceAndTheProcessGoesOn) {
  int calls = 0;
  const auto started = std::chrono::steady_clock::now();
  run_bounded_or_exit([&] { ++calls; }, 30.0, 75, "test", "action");
  EXPECT_EQ(calls, 1);
  // The watchdog is released when the action returns, not after the bound.
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  run_bounded_or_exit([&] { ++calls; }, 0.0, 75, "test", "action");  // 0 = no bound
  EXPECT_EQ(calls, 2);
}

TEST(RunBoundedOrExitDeathTest, AnActionThatNeverReturnsEndsTheProcessWithTheStatusAndSaysWhat) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(run_bounded_or_exit([] { std::this_thread::sleep_for(std::chrono::hours(1)); }, 0.3, 75, "rank 3",
                                  "MPI_Finalize"),
              testing::ExitedWithCode(75),
              "rank 3: MPI_Finalize did not return within 0.3 s; exiting with status 75");
  EXPECT_EXIT(run_bounded_or_exit([] { std::this_thread::sleep_for(std::chrono::hours(1)); }, 0.2, 0, "r", "x"),
              testing::ExitedWithCode(0), "r: x did not return within 0.2 s; exiting with status 0");
}

}  // namespace
}  // namespace sluice::comm
