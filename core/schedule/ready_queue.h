// Internal: the queues of (time, rank) wake-ups of the dependency run and the rendezvous play, handed out in
// nondecreasing time.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

namespace sluice {
namespace schedule {
namespace detail {

// The finest time step every time in a run falls on: 2^-k for the smallest k <= kMaxShift such that every one of
// `values` (the action costs and the transfer time, of which all times are sums and maxima) is a whole multiple of
// it; 0 when there is none (say a cost of 0.3). Whole multiples of a power of two add up exactly in a double, so a
// time divided by the step is a whole number that names its ring bucket.
inline double time_step(std::initializer_list<double> values) {
  constexpr int kMaxShift = 10;
  for (int shift = 0; shift <= kMaxShift; ++shift) {
    const double step = std::ldexp(1.0, -shift);
    const bool all_multiples = std::all_of(values.begin(), values.end(), [&](double value) {
      const double steps = value / step;
      return std::floor(steps) == steps && steps < 1e9;
    });
    if (all_multiples) return step;
  }
  return 0.0;
}

// The longest look-ahead, in time steps, that the per-time-step rings (TimedQueue, RankWakeups) take on; beyond it
// they fall back to a heap.
constexpr double kMaxRingDelay = 4096;

// A ring's bucket count for a look-ahead of `max_delay` steps: a power of two above it, so that live time steps
// never share a bucket.
inline size_t ring_size(double max_delay) {
  size_t size = 2;
  while (static_cast<double>(size) < std::ceil(max_delay) + 2) size *= 2;
  return size;
}

// Which of several entries due at the same time comes out first. It is part of the results (lowering's
// serialization follows it), so each user keeps the order it always had.
enum class Ties {
  kPushOrder,    // the dependency run with whole-number times (the unit costs of lowering and the validator)
  kLowestFirst,  // the lowest entry, as a heap of (time, entry) gives it: every other user
};

// Entries (ranks, or anything ordered) due at times, handed out in nondecreasing time. With times on a step
// (time_step() above) and a bounded look-ahead it is a ring of per-time-step buckets: O(1) per operation with push
// order, a small heap per bucket with kLowestFirst, and no allocation once the buckets have grown, where one heap of
// everything costs O(log entries) and a fresh bucket per step costs an allocation each. Times on no step of at most
// 2^-10, or a look-ahead past 4096 steps, fall back to that heap (whose ties go to the lowest entry).
template <typename Item>
class TimedQueue {
 public:
  // `step`: as time_step() gives it (0: none); `max_delay`: how far past the current time push() can ever be called.
  TimedQueue(double step, double max_delay, Ties ties)
      : use_ring_(step > 0.0 && max_delay / step <= kMaxRingDelay), lowest_first_(ties == Ties::kLowestFirst),
        per_step_(use_ring_ ? 1.0 / step : 0.0), step_(use_ring_ ? step : 0.0),
        buckets_(use_ring_ ? ring_size(max_delay / step) : 0),
        mask_(buckets_.empty() ? 0 : buckets_.size() - 1) {}

  bool empty() const { return use_ring_ ? size_ == 0 : heap_.empty(); }

  void push(double time, Item item) {
    if (!use_ring_) {
      heap_.push({time, item});
      return;
    }
    std::vector<Item>& bucket = buckets_[static_cast<size_t>(time * per_step_) & mask_];
    bucket.push_back(item);
    if (lowest_first_) restore_order(bucket);
    ++size_;
  }

  // Requires !empty().
  std::pair<double, Item> pop() {
    if (!use_ring_) {
      const auto top = heap_.top();
      heap_.pop();
      return top;
    }
    return lowest_first_ ? pop_lowest() : pop_first_pushed();
  }

 private:

  // Out of line, so that push() stays small enough to inline into the dependency run's loop on the unit-cost path.
  __attribute__((noinline)) static void restore_order(std::vector<Item>& bucket) {
    std::push_heap(bucket.begin(), bucket.end(), std::greater<Item>());
  }

  std::pair<double, Item> pop_first_pushed() {
    while (read_ >= buckets_[current_ & mask_].size()) {
      buckets_[current_ & mask_].clear();  // keeps its capacity for the time step that reuses it
      ++current_;
      read_ = 0;
    }
    --size_;
    return {static_cast<double>(current_) * step_, buckets_[current_ & mask_][read_++]};
  }

  std::pair<double, Item> pop_lowest() {
    while (buckets_[current_ & mask_].empty()) ++current_;
    std::vector<Item>& bucket = buckets_[current_ & mask_];
    std::pop_heap(bucket.begin(), bucket.end(), std::greater<Item>());
    const Item item = bucket.back();
    bucket.pop_back();
    --size_;
    return {static_cast<double>(current_) * step_, item};
  }

  using Entry = std::pair<double, Item>;  // (time, item)
  const bool use_ring_;
  const bool lowest_first_;
  const double per_step_;  // time steps per time unit
  const double step_;      // a power of two (time_step()), so a step count times it is exact, and no division
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap_;
  std::vector<std::vector<Item>> buckets_;
  const size_t mask_;
  size_t current_ = 0;  // the time step being handed out
  size_t read_ = 0;     // push order: the next entry of the current bucket
  size_t size_ = 0;
};

// The dependency run's queue of ranks.
using ReadyQueue = TimedQueue<int>;

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
