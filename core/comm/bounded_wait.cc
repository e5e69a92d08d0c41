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
  // Most waits in a pipeline are short (a neighbour finishing one micro-batch): a few yields answer those
  // without a sleep's latency. Longer waits back off to 1 ms sleeps, which cost a core almost nothing.
  constexpr int kYields = 64;
  constexpr auto kLongestSleep = std::chrono::microseconds(1000);
  auto sleep = std::chrono::microseconds(8);
  for (int polls = 0;; ++polls) {
    if (done()) return true;
    if (deadline.passed()) return false;
    if (polls < kYields) {
      sched_yield();
      continue;
    }
    std::this_thread::sleep_for(sleep);
    sleep = std::min(sleep * 2, kLongestSleep);
  }
}

}  // namespace sluice::comm
