#include "core/comm/bounded_wait.h"

#include <sched.h>

#include <algorithm>
#include <thread>

#include "core/comm/adaptive_wait.h"
#include "core/comm/wait_settings.h"

namespace sluice::comm {

Deadline Deadline::after(double seconds) {
  Deadline d;
  if (seconds <= 0.0) return d;
  d.bounded_ = true;
  d.seconds_ = seconds;
  d.at_ = std::chrono::steady_clock::now() +
          std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
  return d;
}

bool Deadline::passed() const { return bounded_ && std::chrono::steady_clock::now() >= at_; }

bool wait_until(const std::function<bool()>& done, const Deadline& deadline) {
  return wait_until(done, deadline, wait_settings().policy, std::string());
}

bool wait_until(const std::function<bool()>& done, const Deadline& deadline, const std::string& kind) {
  return wait_until(done, deadline, wait_settings().policy, kind);
}

bool wait_until(const std::function<bool()>& done, const Deadline& deadline, WaitPolicy policy) {
  return wait_until(done, deadline, policy, std::string());
}

namespace {

using Clock = std::chrono::steady_clock;

// Sleeps with an interval that doubles from `first` (8 us for `block`) to 1 ms: every policy's past its polling
// phase.
class BackOff {
 public:
  explicit BackOff(std::chrono::microseconds first = std::chrono::microseconds(8)) : interval_(first) {}
  void sleep() {
    std::this_thread::sleep_for(interval_);
    interval_ = std::min(interval_ * 2, std::chrono::microseconds(1000));
  }

 private:
  std::chrono::microseconds interval_;
};

// Most waits are short (a peer finishing the same small step a moment later): yielding first answers those
// without a sleep's latency (a sleep lasts at least the kernel's timer slack, 50 us, and each agreement has
// two waits), while sched_yield hands the core to any runnable process. Longer waits back off to sleeps
// growing to 1 ms, which cost a core almost nothing. kYield yields longer before backing off; kSpin never
// gives the core away (the caller asked for the lowest latency at the price of a busy core).
bool wait_fixed(const std::function<bool()>& done, const Deadline& deadline, WaitPolicy policy) {
  const auto yield_phase = policy == WaitPolicy::kYield ? std::chrono::microseconds(20000)   // 20 ms
                                                        : std::chrono::microseconds(250);
  const auto start = Clock::now();
  BackOff back_off;
  for (;;) {
    if (done()) return true;
    if (deadline.passed()) return false;
    if (policy == WaitPolicy::kSpin) continue;
    if (Clock::now() - start < yield_phase) {
      sched_yield();
      continue;
    }
    back_off.sleep();
  }
}

// kAdaptive (adaptive_wait.h): the plan from this kind's recent waits; the length of this one, if it waited and
// did not time out, joins them.
bool wait_adaptive(const std::function<bool()>& done, const Deadline& deadline, const std::string& kind) {
  if (done()) return true;
  WaitHistory& history = wait_history_of(kind);
  const AdaptivePlan plan = plan_adaptive_wait(history);
  const auto start = Clock::now();
  BackOff back_off(kLateBackOff);
  for (;;) {
    if (deadline.passed()) return false;
    const auto elapsed = std::chrono::duration_cast<Micros>(Clock::now() - start);
    if (elapsed < plan.sleep_until) {
      std::this_thread::sleep_for(std::min(plan.sleep_until - elapsed, kSleepSlice));
    } else if (elapsed < plan.poll_until) {
      sched_yield();
    } else {
      back_off.sleep();
    }
    if (done()) break;
  }
  history.record(std::chrono::duration_cast<Micros>(Clock::now() - start));
  return true;
}

}  // namespace

bool wait_until(const std::function<bool()>& done, const Deadline& deadline, WaitPolicy policy,
                const std::string& kind) {
  if (policy == WaitPolicy::kAdaptive) return wait_adaptive(done, deadline, kind);
  return wait_fixed(done, deadline, policy);
}

}  // namespace sluice::comm
