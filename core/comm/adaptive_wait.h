// comm.wait: adaptive — how long a wait polls is bounded by how long recent waits of the same kind took.
//
// Why: in a pipeline whose stages are unequal, the lightly loaded rank waits for its busy peer on every
// micro-batch, and those waits are long and regular. Polling through them (spin, or sched_yield on a core
// nobody else wants) burns that rank's core for the whole wait; sleeping with a fixed back-off (block) answers
// up to a millisecond late on the waits that are short. A wait of a kind whose recent instances all took at
// least T is therefore slept through up to a margin before T (in slices, polling between, so a message that
// comes early is still seen within a slice), polled with sched_yield from there to the same margin past T, and
// backed off with sleeps growing to 1 ms after that. The margin covers a sleep's late wake-up; polling longer
// than that around T spends the waiting rank's core on the jitter of the waits (bench/host_cores). A kind with no
// history (the first waits, a new call) polls for `block`'s 250 us. The slices bound the worst answer delay to
// `block`'s (about a millisecond).
//
// The plan is a pure function of the history (tests/comm:adaptive_wait_test); bounded_wait.cc keeps one history
// per kind of wait (the text that names what is waited for) and thread.
#pragma once

#include <array>
#include <chrono>
#include <string>

namespace sluice::comm {

using Micros = std::chrono::microseconds;

// The lengths of the last kLength waits of one kind that did wait (their condition was false at the first
// poll; a wait that timed out is not recorded: a stopped peer says nothing about the next wait).
class WaitHistory {
 public:
  static constexpr int kLength = 8;
  void record(Micros waited);
  int size() const { return count_; }
  Micros shortest() const;  // 0 when empty
  Micros longest() const;   // 0 when empty

 private:
  std::array<Micros, kLength> waits_{};
  int count_ = 0;
  int next_ = 0;
};

// What one adaptive wait does, in time since it started: sleep (in slices of at most kSleepSlice, polling
// between) until `sleep_until`, then poll with sched_yield between tests until `poll_until`, then sleep with an
// interval doubling from kLateBackOff to 1 ms.
struct AdaptivePlan {
  Micros sleep_until{0};
  Micros poll_until{0};
};

// Waits shorter than this are never slept ahead: a sleep's wake-up (timer slack and the scheduler, ~50-100 us)
// would be a large part of them.
constexpr Micros kSleepAheadFrom{1000};
// Sleep ahead only with this many waits of the kind seen.
constexpr int kSleepAheadAfter = 2;
// The longest slice of the sleep-ahead phase: how late an earlier-than-usual answer can be seen.
constexpr Micros kSleepSlice{1000};
// How far before the shortest recent wait the sleep ends, and polling runs as far past it: at least kWakeMargin
// (a sleep wakes late by the timer slack, 50 us by default, plus the scheduler's latency), or 1/kWakeMarginDivisor
// of that wait (the waits' own jitter grows with them).
constexpr Micros kWakeMargin{60};
constexpr int kWakeMarginDivisor = 64;
// Without a sleep ahead (short waits, or too little history), polling runs until a quarter past the longest recent
// wait, but at least kMinPoll (`block`'s first phase) and at most kMaxPoll.
constexpr Micros kMinPoll{250};
constexpr Micros kMaxPoll{500};

// Past polling, the back-off's first sleep: a wait that lasted longer than its kind's recent ones is not a short
// one, and `block`'s 8 us steps would wake the core several times for nothing.
constexpr Micros kLateBackOff{64};

AdaptivePlan plan_adaptive_wait(const WaitHistory& history);

// This thread's history of the waits of kind `kind` (created empty on first use).
WaitHistory& wait_history_of(const std::string& kind);

}  // namespace sluice::comm
