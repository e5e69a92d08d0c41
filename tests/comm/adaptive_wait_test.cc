// comm.wait: adaptive (issue 28). The plan a wait follows is a pure function of how long recent waits of its kind
// took: sleep ahead only through what every recent wait took (minus a wake-up margin), poll from there to the same
// margin past it (kMinPoll to kMaxPoll without a sleep ahead). No timing here: fake histories in, plans out; and that
// wait_until records a wait that waited, and neither one answered at the first poll nor one that timed out.
#include "core/comm/adaptive_wait.h"

#include <gtest/gtest.h>

#include "core/comm/bounded_wait.h"

namespace sluice::comm {
namespace {

WaitHistory history_of(std::initializer_list<int> micros) {
  WaitHistory h;
  for (int us : micros) h.record(Micros{us});
  return h;
}

TEST(AdaptivePlan, WithoutHistoryWaitsAsBlock) {
  const AdaptivePlan plan = plan_adaptive_wait(WaitHistory{});
  EXPECT_EQ(plan.sleep_until, Micros{0});
  EXPECT_EQ(plan.poll_until, kMinPoll);
}

TEST(AdaptivePlan, LongRegularWaitsAreSleptThroughUpToAMargin) {
  // Eight waits of 8 ms: sleep until 8 ms - 8/64 ms, then poll to the same margin past 8 ms.
  const AdaptivePlan plan = plan_adaptive_wait(history_of({8000, 8000, 8000, 8000, 8000, 8000, 8000, 8000}));
  EXPECT_EQ(plan.sleep_until.count(), 7875);
  EXPECT_EQ(plan.poll_until.count(), 8125);
  // 1.6 ms waits: the margin is kWakeMargin (60 us > 1600 / 64); polling lasts twice the margin.
  const AdaptivePlan short_ones = plan_adaptive_wait(history_of({1600, 1700, 1650}));
  EXPECT_EQ(short_ones.sleep_until.count(), 1540);
  EXPECT_EQ(short_ones.poll_until.count(), 1660);
}

TEST(AdaptivePlan, TheShortestRecentWaitBoundsTheSleep) {
  const AdaptivePlan plan = plan_adaptive_wait(history_of({9000, 3200, 12000, 9000}));
  EXPECT_EQ(plan.sleep_until.count(), 3140);
  EXPECT_EQ(plan.poll_until.count(), 3260);  // the margin past the shortest, however long the longest was
}

TEST(AdaptivePlan, ShortWaitsAreNeverSleptAhead) {
  const AdaptivePlan plan = plan_adaptive_wait(history_of({200, 300, 360}));
  EXPECT_EQ(plan.sleep_until, Micros{0});
  EXPECT_EQ(plan.poll_until.count(), 450);  // a quarter past the longest
  EXPECT_EQ(plan_adaptive_wait(history_of({600, 900})).poll_until, kMaxPoll);
  // One short wait among long ones: no sleep ahead, and polling still stops kMaxPoll in.
  const AdaptivePlan mixed = plan_adaptive_wait(history_of({20, 10000, 10000}));
  EXPECT_EQ(mixed.sleep_until, Micros{0});
  EXPECT_EQ(mixed.poll_until, kMaxPoll);
}

TEST(AdaptivePlan, OneWaitIsNotEnoughToSleepAhead) {
  const AdaptivePlan plan = plan_adaptive_wait(history_of({5000}));
  EXPECT_EQ(plan.sleep_until, Micros{0});
  EXPECT_EQ(plan.poll_until, kMaxPoll);
}

TEST(WaitHistory, KeepsTheLastEightWaits) {
  WaitHistory h = history_of({10000, 10000, 10000, 10000, 10000, 10000, 10000, 10000, 2000});
  EXPECT_EQ(h.size(), WaitHistory::kLength);
  EXPECT_EQ(h.shortest(), Micros{2000});  // a shorter wait counts at once
  EXPECT_EQ(h.longest(), Micros{10000});
  for (int i = 0; i < WaitHistory::kLength - 1; ++i) h.record(Micros{10000});
  EXPECT_EQ(h.shortest(), Micros{2000});
  h.record(Micros{10000});
  EXPECT_EQ(h.shortest(), Micros{10000});  // eight waits later it is gone
}

TEST(WaitHistory, OnePerKind) {
  WaitHistory& a = wait_history_of("adaptive_wait_test: kind a");
  WaitHistory& b = wait_history_of("adaptive_wait_test: kind b");
  EXPECT_NE(&a, &b);
  EXPECT_EQ(&a, &wait_history_of("adaptive_wait_test: kind a"));
}

TEST(WaitUntil, AdaptiveRecordsOnlyWaitsThatWaitedAndEnded) {
  const std::string kind = "adaptive_wait_test: recorded";
  EXPECT_TRUE(wait_until([] { return true; }, Deadline::after(5.0), WaitPolicy::kAdaptive, kind));
  EXPECT_EQ(wait_history_of(kind).size(), 0);  // answered at the first poll
  EXPECT_FALSE(wait_until([] { return false; }, Deadline::after(0.01), WaitPolicy::kAdaptive, kind));
  EXPECT_EQ(wait_history_of(kind).size(), 0);  // timed out
  int calls = 0;
  EXPECT_TRUE(wait_until([&] { return ++calls == 3; }, Deadline::after(5.0), WaitPolicy::kAdaptive, kind));
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(wait_history_of(kind).size(), 1);
}

}  // namespace
}  // namespace sluice::comm
