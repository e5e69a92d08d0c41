// Internal: the dependency run's queue of (time, rank) wake-ups, handed out in nondecreasing time.
#pragma once

#include <cmath>
#include <cstddef>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

namespace sluice {
namespace schedule {
namespace detail {

// With whole-number times (the unit costs that lowering and the validator use) and a bounded look-ahead it is
// a ring of per-time-step buckets: O(1) per operation and no allocation once the buckets have grown, where a
// heap costs O(log ranks) and a fresh bucket per step costs an allocation each. Ties keep push order; lowering's
// serialization depends on that. Other times fall back to a heap whose ties go to the lower rank (the
// simulator's results do not depend on the order of ties, only on each action's inputs).
class ReadyQueue {
 public:
  // `max_delay`: how far past the current time push() can ever be called.
  ReadyQueue(bool whole_times, double max_delay)
      : use_ring_(whole_times && max_delay <= kMaxRingDelay), buckets_(use_ring_ ? ring_size(max_delay) : 0),
        mask_(buckets_.empty() ? 0 : buckets_.size() - 1) {}

  bool empty() const { return use_ring_ ? size_ == 0 : heap_.empty(); }

  void push(double time, int rank) {
    if (!use_ring_) {
      heap_.push({time, rank});
      return;
    }
    buckets_[static_cast<size_t>(time) & mask_].push_back(rank);
    ++size_;
  }

  // Requires !empty().
  std::pair<double, int> pop() {
    if (!use_ring_) {
      const auto top = heap_.top();
      heap_.pop();
      return top;
    }
    while (read_ >= buckets_[current_ & mask_].size()) {
      buckets_[current_ & mask_].clear();  // keeps its capacity for the time step that reuses it
      ++current_;
      read_ = 0;
    }
    --size_;
    return {static_cast<double>(current_), buckets_[current_ & mask_][read_++]};
  }

 private:
  static constexpr double kMaxRingDelay = 4096;

  // A power of two above the look-ahead, so that live time steps never share a bucket.
  static size_t ring_size(double max_delay) {
    size_t size = 2;
    while (static_cast<double>(size) < std::ceil(max_delay) + 2) size *= 2;
    return size;
  }

  using Entry = std::pair<double, int>;  // (time, rank)
  const bool use_ring_;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap_;
  std::vector<std::vector<int>> buckets_;
  const size_t mask_;
  size_t current_ = 0;
  size_t read_ = 0;
  size_t size_ = 0;
};

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
