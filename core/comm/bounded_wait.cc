#include "core/comm/bounded_wait.h"

#include <sched.h>

#include <algorithm>
#include <thread>

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
  // Most waits are short (a peer finishing the same small step a moment later): yielding for the first
  // 250 us answers those without a sleep's latency (a sleep lasts at least the kernel's timer slack, 50 us,
  // and each agreement has two waits), while sched_yield hands the core to any runnable process. Longer waits
  // back off to 1 ms sleeps, which cost a core almost nothing.
  constexpr auto kYieldPhase = std::chrono::microseconds(250);
  constexpr auto kLongestSleep = std::chrono::microseconds(1000);
  const auto start = std::chrono::steady_clock::now();
  auto sleep = std::chrono::microseconds(8);
  for (;;) {
    if (done()) return true;
    if (deadline.passed()) return false;
    if (std::chrono::steady_clock::now() - start < kYieldPhase) {
      sched_yield();
      continue;
    }
    std::this_thread::sleep_for(sleep);
    sleep = std::min(sleep * 2, kLongestSleep);
  }
}

}  // namespace sluice::comm
