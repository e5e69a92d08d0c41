// "Rank 0 decides" (core/comm/rank_zero_decides.h) on real MPI ranks: rank 0's decision reaches every rank whole
// (numbers and a text longer than the agreement's message limit), only rank 0 decides, rank 0's failure reaches
// every rank naming it, and a rank that never arrives is named in a TIMEOUT on every live rank within the bound.
#include "core/comm/rank_zero_decides.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/comm/wait_settings.h"
#include "tests/comm/fresh_comm_test.h"
#include "tests/mpi_world.h"

namespace sluice::comm {
namespace {

using sluice::testing::world_rank;
using sluice::testing::world_size;

class RankZeroDecidesTest : public sluice::testing::FreshCommTest {};

TEST_F(RankZeroDecidesTest, EveryRankGetsRankZerosDecisionWhole) {
  const std::string report(40000, 'r');  // longer than the agreement cuts error messages to: decisions are data
  int calls = 0;
  const Decision d = rank_zero_decides(comm_, "schedule", [&] {
    ++calls;
    return Decision{{7, -3, int64_t{1} << 40}, report};
  });
  EXPECT_EQ(calls, world_rank() == 0 ? 1 : 0);
  EXPECT_EQ(d.numbers, (std::vector<int64_t>{7, -3, int64_t{1} << 40}));
  EXPECT_EQ(d.text, report);
  // An empty decision is a decision too.
  EXPECT_TRUE(rank_zero_decides(comm_, "nothing", [] { return Decision{}; }).numbers.empty());
}

TEST_F(RankZeroDecidesTest, RankZerosFailureReachesEveryRankNamingIt) {
  try {
    rank_zero_decides(comm_, "rank order", []() -> Decision { throw std::runtime_error("cannot size layer 3"); });
    ADD_FAILURE() << "no rank may go on after rank 0 failed";
  } catch (const Error& e) {  // first: sluice::Error is a std::runtime_error too
    EXPECT_NE(world_rank(), 0) << "rank 0 must rethrow its own exception";
    const std::string text = e.what();
    EXPECT_NE(text.find("cannot size layer 3 (on rank 0, during rank order)"), std::string::npos) << text;
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(world_rank(), 0) << "only rank 0 rethrows its own exception";
    EXPECT_STREQ(e.what(), "cannot size layer 3");
  }
}

// Last: a timeout marks this process's communication abandoned (request_wait.h).
TEST_F(RankZeroDecidesTest, ASilentRankIsNamedInATimeoutOnEveryLiveRank) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  const WaitSettings saved = wait_settings();
  WaitSettings quick = saved;
  quick.timeout_seconds = 0.5;
  set_wait_settings(quick);
  const int silent = world_size() - 1;
  // Stands for a stopped rank: it reaches the call only after the others have given up.
  if (world_rank() == silent) std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  const auto t0 = std::chrono::steady_clock::now();
  std::string text;
  ErrorCode code = ErrorCode::kInternal;
  try {
    rank_zero_decides(comm_, "pipeline.schedule auto", [] { return Decision{{1}, "chosen"}; });
  } catch (const Error& e) {
    text = e.what();
    code = e.code();
  }
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  set_wait_settings(saved);
  EXPECT_EQ(code, ErrorCode::kTimeout) << text;
  if (world_rank() != silent) {
    EXPECT_NE(text.find("pipeline.schedule auto: no answer from rank " + std::to_string(silent)), std::string::npos)
        << text;
    EXPECT_LT(waited, 1.8) << "the wait was not bounded by comm.timeout";
  }
  // The late rank read rank 0's verdict when it arrived; the next decision works for everyone, its stale report
  // of the timed-out call notwithstanding.
  MPI_Barrier(comm_);
  EXPECT_EQ(rank_zero_decides(comm_, "next", [] { return Decision{{2}, ""}; }).numbers, std::vector<int64_t>{2});
}

}  // namespace
}  // namespace sluice::comm
