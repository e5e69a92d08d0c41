// comm.wait: `auto`'s choice as a pure function of the node's ranks and the cores they may use, the names the
// config uses, and that wait_until under each policy waits as its name says (block sleeps, spin does not).
#include "core/comm/wait_policy.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>

#include "core/comm/bounded_wait.h"
#include "core/comm/wait_settings.h"

namespace sluice::comm {
namespace {

TEST(ChooseWaitPolicy, AutoBlocksWhenRanksOutnumberCores) {
  EXPECT_EQ(choose_wait_policy(WaitPolicy::kAuto, 4, 2), WaitPolicy::kBlock);
  EXPECT_EQ(choose_wait_policy(WaitPolicy::kAuto, 3, 2), WaitPolicy::kBlock);
  EXPECT_EQ(choose_wait_policy(WaitPolicy::kAuto, 65, 64), WaitPolicy::kBlock);
}

TEST(ChooseWaitPolicy, AutoAdaptsWhenEveryRankHasACore) {
  EXPECT_EQ(choose_wait_policy(WaitPolicy::kAuto, 2, 2), WaitPolicy::kAdaptive);
  EXPECT_EQ(choose_wait_policy(WaitPolicy::kAuto, 1, 16), WaitPolicy::kAdaptive);
  EXPECT_EQ(choose_wait_policy(WaitPolicy::kAuto, 64, 64), WaitPolicy::kAdaptive);
}

TEST(ChooseWaitPolicy, NonsenseCountsCountAsOne) {
  EXPECT_EQ(choose_wait_policy(WaitPolicy::kAuto, 0, 0), WaitPolicy::kAdaptive);
  EXPECT_EQ(choose_wait_policy(WaitPolicy::kAuto, 2, -1), WaitPolicy::kBlock);
}

TEST(ChooseWaitPolicy, AnExplicitPolicyIsKept) {
  for (WaitPolicy p : {WaitPolicy::kSpin, WaitPolicy::kYield, WaitPolicy::kBlock, WaitPolicy::kAdaptive}) {
    EXPECT_EQ(choose_wait_policy(p, 8, 1), p);
    EXPECT_EQ(choose_wait_policy(p, 1, 8), p);
  }
}

TEST(WaitPolicyNames, MatchTheEnumOrder) {
  EXPECT_EQ(wait_policy_name(WaitPolicy::kAuto), "auto");
  EXPECT_EQ(wait_policy_name(WaitPolicy::kSpin), "spin");
  EXPECT_EQ(wait_policy_name(WaitPolicy::kYield), "yield");
  EXPECT_EQ(wait_policy_name(WaitPolicy::kBlock), "block");
  EXPECT_EQ(wait_policy_name(WaitPolicy::kAdaptive), "adaptive");
}

TEST(CoresAvailable, AtLeastOne) { EXPECT_GE(cores_available_to_this_process(), 1); }

TEST(WaitSettings, AutoIsStoredAsBlockAndDeadlinesFollowTheSettings) {
  const WaitSettings saved = wait_settings();
  WaitSettings s;
  s.timeout_seconds = 2.0;
  s.arrival_timeout_seconds = 0.0;
  s.policy = WaitPolicy::kAuto;
  set_wait_settings(s);
  EXPECT_EQ(wait_settings().policy, WaitPolicy::kBlock);
  EXPECT_TRUE(step_deadline().bounded());
  EXPECT_EQ(step_deadline().seconds(), 2.0);
  EXPECT_FALSE(arrival_deadline().bounded());
  set_wait_settings(saved);
}

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + 1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

// CPU-seconds a 0.4 s wait for a condition that never holds costs under `policy`; checks the wait gives up in time.
double cpu_of_waiting(WaitPolicy policy) {
  const double before = cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(wait_until([] { return false; }, Deadline::after(0.4), policy));
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(waited, 0.4);
  EXPECT_LT(waited, 1.5);
  return cpu_seconds() - before;
}

TEST(WaitUntil, BlockSleepsAndSpinDoesNot) {
  const double block = cpu_of_waiting(WaitPolicy::kBlock);
  const double spin = cpu_of_waiting(WaitPolicy::kSpin);
  EXPECT_LT(block, 0.05) << "block used " << block << " CPU-s in a 0.4 s wait";
  // Loose: under load a spinning process gets only its share of a core.
  EXPECT_GT(spin, 2 * block + 0.02) << "spin used " << spin << " CPU-s, block " << block;
}

TEST(WaitUntil, ReturnsAsSoonAsTheConditionHoldsUnderEveryPolicy) {
  for (WaitPolicy p : {WaitPolicy::kSpin, WaitPolicy::kYield, WaitPolicy::kBlock, WaitPolicy::kAdaptive}) {
    int calls = 0;
    EXPECT_TRUE(wait_until([&] { return ++calls == 5; }, Deadline::after(5.0), p));
    EXPECT_EQ(calls, 5);
  }
}

}  // namespace
}  // namespace sluice::comm
