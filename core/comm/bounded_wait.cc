#include "core/comm/bounded_wait.h"

#include <sched.h>

#include <algorithm>
#include <thread>

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
  return wait_until(done, deadline, wait_settings().policy);
}

bool wait_until(const std::function<bool()>& done, const Deadline& deadline, WaitPolicy policy) {
  // Most waits are short (a peer finishing the same small step a moment later): yielding first answers those
  // without a sleep's latency (a sleep lasts at least the kernel's timer slack, 50 us, and each agreement has
  // two waits), while sched_yield hands the core to any runnable process. Longer waits back off to sleeps
  // growing to 1 ms, which cost a core almost nothing. kYield yields longer before backing off; kSpin never
  // gives the core away (the caller asked for the lowest latency at the price of a busy core).
  constexpr auto kLongestSleep = std::chrono::microseconds(1000);
  const auto yield_phase = policy == WaitPolicy::kYield ? std::chrono::microseconds(20000)   // 20 ms
                                                        : std::chrono::microseconds(250);
  const auto start = std::chrono::steady_clock::now();
  auto sleep = std::chrono::microseconds(8);
  for (;;) {
    if (done()) return true;
    if (deadline.passed()) return false;
    if (policy == WaitPolicy::kSpin) continue;
    if (std::chrono::steady_clock::now() - start < yield_phase) {
      sched_yield();
      continue;
    }
    std::this_thread::sleep_for(sleep);
    sleep = std::min(sleep * 2, kLongestSleep);
  }
}

}  // namespace sluice::comm
