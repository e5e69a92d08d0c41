// The one cross-rank failure agreement (core/comm/agreement.h), on real MPI ranks: success, the first failing
// rank's code and message on every rank, out-of-step callers named, a silent rank named in a TIMEOUT, long
// messages cut visibly, and a late rank's stale report not confusing the next call.
#include "core/comm/agreement.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "core/comm/wait_settings.h"
#include "tests/comm/fresh_comm_test.h"
#include "tests/mpi_world.h"

namespace sluice::comm {
namespace {

using sluice::testing::world_rank;
using sluice::testing::world_size;

class AgreementTest : public sluice::testing::FreshCommTest {};

TEST_F(AgreementTest, NoFailureMeansNoErrorAndCountsCalls) {
  for (uint64_t call = 1; call <= 3; ++call) {
    const Verdict v = agree(comm_, "step", std::nullopt);
    EXPECT_FALSE(v.error.has_value()) << v.error->what();
    EXPECT_EQ(v.sequence, call);
    EXPECT_EQ(v.origin, -1);
  }
}

TEST_F(AgreementTest, EveryRankGetsTheFirstFailingRanksCodeAndMessage) {
  const int last = world_size() - 1;
  std::optional<Error> mine;
  // The last rank and (with more than two ranks) rank 1 fail; the lower one wins.
  if (world_rank() == last) mine = Error(ErrorCode::kIo, "disk full on the last rank");
  if (world_size() > 2 && world_rank() == 1) mine = Error(ErrorCode::kCallback, "callback failed on rank 1");
  const Verdict v = agree(comm_, "saving", mine);
  ASSERT_TRUE(v.error.has_value());
  const int first = world_size() > 2 ? 1 : last;
  EXPECT_EQ(v.origin, first);
  EXPECT_EQ(v.error->code(), first == 1 && world_size() > 2 ? ErrorCode::kCallback : ErrorCode::kIo);
  const std::string text = v.error->what();
  EXPECT_NE(text.find(first == 1 && world_size() > 2 ? "callback failed on rank 1" : "disk full"), std::string::npos)
      << text;
  if (world_rank() != first) {
    EXPECT_NE(text.find("(on rank " + std::to_string(first) + ", during saving)"), std::string::npos) << text;
  }
}

TEST_F(AgreementTest, TheFailingRankRethrowsItsOwnException) {
  std::exception_ptr mine;
  if (world_rank() == 0) mine = std::make_exception_ptr(std::runtime_error("not a sluice error"));
  try {
    agree_or_throw(comm_, "start", mine);
    FAIL() << "no exception";
  } catch (const Error& e) {
    ASSERT_NE(world_rank(), 0) << "rank 0 should get its own exception back";
    EXPECT_EQ(e.code(), ErrorCode::kInternal);
    EXPECT_NE(std::string(e.what()).find("not a sluice error"), std::string::npos) << e.what();
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(world_rank(), 0);
    EXPECT_STREQ(e.what(), "not a sluice error");
  }
}

TEST_F(AgreementTest, RanksInDifferentCallsAreNamedOutOfStep) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  // The last rank is in another collective function than the others (it skipped a train step).
  const std::string what = world_rank() == world_size() - 1 ? "sluice_save_checkpoint arguments"
                                                             : "sluice_train_step arguments";
  const Verdict v = agree(comm_, what, std::nullopt);
  ASSERT_TRUE(v.error.has_value());
  EXPECT_EQ(v.error->code(), ErrorCode::kState);
  const std::string text = v.error->what();
  EXPECT_NE(text.find("out of step"), std::string::npos) << text;
  EXPECT_NE(text.find("rank " + std::to_string(world_size() - 1)), std::string::npos) << text;
  EXPECT_NE(text.find("sluice_save_checkpoint arguments"), std::string::npos) << text;
}

TEST_F(AgreementTest, ASilentRankIsNamedInATimeoutOnEveryOtherRank) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  const int silent = world_size() - 1;
  if (world_rank() == silent) {
    // Stands for a stopped rank: it reaches the call only after the others have given up.
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  }
  const auto t0 = std::chrono::steady_clock::now();
  const Verdict v = agree(comm_, "step 7", std::nullopt, Deadline::after(0.5));
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(v.error.has_value());
  EXPECT_EQ(v.error->code(), ErrorCode::kTimeout);
  if (world_rank() != silent) {
    const std::string text = v.error->what();
    EXPECT_NE(text.find("no answer from rank " + std::to_string(silent)), std::string::npos) << text;
    EXPECT_LT(waited, 2.0) << "the deadline did not bound the wait";
  }
  // The late rank read rank 0's verdict when it arrived; the next call (without deadline) works for everyone,
  // its stale report of the timed-out call notwithstanding.
  MPI_Barrier(comm_);
  const Verdict next = agree(comm_, "step 8", std::nullopt);
  EXPECT_FALSE(next.error.has_value()) << next.error->what();
}

// The default deadline counts from the agreement's start, not from where the call is written: with
// `agree_or_throw(comm, what, capture_failure(step))` the default argument may be evaluated before the step runs
// (unspecified order; GCC did so), so a step longer than comm.timeout met a deadline already past and the ranks
// still in their step were named silent.
TEST_F(AgreementTest, TheDefaultDeadlineStartsAfterAStepLongerThanTheTimeout) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  const WaitSettings saved = wait_settings();
  WaitSettings quick = saved;
  quick.timeout_seconds = 0.5;
  set_wait_settings(quick);
  // The last rank's step is the slowest, so rank 0 waits for it; every step outlasts the 0.5 s timeout.
  const int millis = 800 + 200 * world_rank();
  bool ok = true;
  std::string text;
  try {
    agree_or_throw(comm_, "a long step", capture_failure([&] {
                     std::this_thread::sleep_for(std::chrono::milliseconds(millis));
                   }));
  } catch (const Error& e) {
    ok = false;
    text = e.what();
  }
  set_wait_settings(saved);
  EXPECT_TRUE(ok) << text;
}

TEST_F(AgreementTest, LongMessagesAreCutVisibly) {
  std::optional<Error> mine;
  if (world_rank() == 0) mine = Error(ErrorCode::kIo, "cannot open '" + std::string(1 << 20, 'x') + "'");
  const Verdict v = agree(comm_, "opening", mine);
  ASSERT_TRUE(v.error.has_value());
  const std::string text = v.error->what();
  EXPECT_LT(text.size(), 20000u);
  EXPECT_NE(text.find("more characters]"), std::string::npos);
}

TEST_F(AgreementTest, WaitingDoesNotSpinACore) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  // Rank 0 arrives 1 s late; the others wait inside the agreement. Their CPU time must stay far below 1 s.
  std::clock_t c0 = std::clock();
  if (world_rank() == 0) std::this_thread::sleep_for(std::chrono::seconds(1));
  c0 = std::clock();
  agree(comm_, "late root", std::nullopt);
  const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  if (world_rank() != 0) EXPECT_LT(cpu, 0.3) << "a waiting rank burned " << cpu << " CPU-s in 1 s";
}

}  // namespace
}  // namespace sluice::comm
