#include "core/comm/adaptive_wait.h"

#include <algorithm>
#include <unordered_map>

namespace sluice::comm {

void WaitHistory::record(Micros waited) {
  waits_[static_cast<size_t>(next_)] = std::max(waited, Micros{0});
  next_ = (next_ + 1) % kLength;
  count_ = std::min(count_ + 1, kLength);
}

Micros WaitHistory::shortest() const {
  if (count_ == 0) return Micros{0};
  return *std::min_element(waits_.begin(), waits_.begin() + count_);
}

Micros WaitHistory::longest() const {
  if (count_ == 0) return Micros{0};
  return *std::max_element(waits_.begin(), waits_.begin() + count_);
}

AdaptivePlan plan_adaptive_wait(const WaitHistory& history) {
  AdaptivePlan plan;
  const Micros shortest = history.shortest();
  if (history.size() >= kSleepAheadAfter && shortest >= kSleepAheadFrom) {
    const Micros margin = std::max(kWakeMargin, shortest / kWakeMarginDivisor);
    plan.sleep_until = shortest - margin;
    plan.poll_until = shortest + margin;
    return plan;
  }
  const Micros beyond_longest = history.longest() + history.longest() / 4;
  plan.poll_until = std::clamp(beyond_longest, kMinPoll, kMaxPoll);
  return plan;
}

WaitHistory& wait_history_of(const std::string& kind) {
  // Kinds are the texts of Sluice's wait sites (a few dozen); a bound keeps a host that names many peers or
  // sizes from growing the table without end: past it the table starts afresh.
  constexpr size_t kMostKinds = 4096;
  thread_local std::unordered_map<std::string, WaitHistory> histories;
  if (histories.size() >= kMostKinds && histories.find(kind) == histories.end()) histories.clear();
  return histories[kind];
}

}  // namespace sluice::comm
