// The CPU backend's team of threads (kernels/cpu/parallel_blocks.h): every block runs once, on as many threads as
// asked (never more than there are blocks), in order on the caller's thread when asked for one, and a block's
// exception comes back to the caller after every block has run.
#include "kernels/cpu/parallel_blocks.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace sluice::kernels {
namespace {

TEST(ParallelBlocksTest, EveryBlockRunsOnceOnTheThreadsAskedFor) {
  omp_set_dynamic(0);  // OMP_DYNAMIC=true in the environment would let the runtime give fewer threads
  for (int threads : {1, 2, 3, 8}) {
    if (threads > omp_get_thread_limit()) continue;
    for (int64_t count : {1, 2, 5, 16}) {
      SCOPED_TRACE("threads=" + std::to_string(threads) + " blocks=" + std::to_string(count));
      std::vector<std::atomic<int>> runs(static_cast<size_t>(count));
      std::mutex mutex;
      std::set<std::thread::id> seen;
      run_blocks(count, threads, [&](int64_t j) {
        runs[static_cast<size_t>(j)]++;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));  // so one thread cannot take every block
        const std::lock_guard<std::mutex> lock(mutex);
        seen.insert(std::this_thread::get_id());
      });
      for (int64_t j = 0; j < count; ++j) EXPECT_EQ(runs[static_cast<size_t>(j)].load(), 1) << "block " << j;
      const size_t expected = static_cast<size_t>(std::min<int64_t>(threads, count));
      EXPECT_EQ(seen.size(), expected) << "threads that ran blocks";
      if (expected == 1) {
        EXPECT_EQ(*seen.begin(), std::this_thread::get_id()) << "one thread is the caller's";
      }
    }
  }
}

TEST(ParallelBlocksTest, OneThreadRunsTheBlocksInOrder) {
  std::vector<int64_t> order;
  run_blocks(6, 1, [&](int64_t j) { order.push_back(j); });
  EXPECT_EQ(order, (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  run_blocks(0, 4, [&](int64_t) { ADD_FAILURE() << "no block to run"; });
}

TEST(ParallelBlocksTest, AnExceptionReachesTheCallerAfterEveryBlockRan) {
  for (int threads : {1, 2}) {
    std::atomic<int> ran{0};
    try {
      run_blocks(4, threads, [&](int64_t j) {
        ++ran;
        if (j == 1 || j == 3) throw std::runtime_error("block " + std::to_string(j));
      });
      ADD_FAILURE() << "the block's exception was lost";
    } catch (const std::runtime_error& error) {
      EXPECT_STREQ(error.what(), "block 1") << "the first failing block's, by index";
      EXPECT_EQ(ran.load(), 4) << "the other blocks must still run";
    }
  }
}

TEST(ParallelBlocksTest, InsideTheHostsParallelRegionTheBlocksStayOnTheCallingThread) {
  if (omp_get_thread_limit() < 2) GTEST_SKIP() << "OMP_THREAD_LIMIT leaves no second thread";
  omp_set_dynamic(0);
  const int levels = omp_get_max_active_levels();
  omp_set_max_active_levels(4);  // a host that allows nesting: the blocks must still not multiply its threads
  std::vector<int> spread(2, 0);
#pragma omp parallel num_threads(2)
  {
    std::mutex mutex;
    std::set<std::thread::id> seen;
    run_blocks(4, 2, [&](int64_t) {
      const std::lock_guard<std::mutex> lock(mutex);
      seen.insert(std::this_thread::get_id());
    });
    spread[static_cast<size_t>(omp_get_thread_num())] = static_cast<int>(seen.size());
  }
  omp_set_max_active_levels(levels);
  EXPECT_EQ(spread, (std::vector<int>{1, 1})) << "threads that ran each host thread's blocks";
}

}  // namespace
}  // namespace sluice::kernels
