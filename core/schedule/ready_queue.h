// Internal: the dependency run's queue of (time, rank) wake-ups, handed out in nondecreasing time.
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

// With times on a step (time_step() above) and a bounded look-ahead it is a ring of per-time-step buckets: O(1) per
// operation and no allocation once the buckets have grown, where a heap costs O(log ranks) and a fresh bucket per
// step costs an allocation each. Which of several ranks woken at the same time goes first is part of the result
// (lowering's serialization follows it), and each path keeps the order it always had: with whole-number times (the
// unit costs that lowering and the validator use) ties keep push order; with any other times they go to the lower
// rank, as the heap that served them before gave them (on a finer step each bucket is a small heap of ranks). Times
// on no step of at most 2^-10 fall back to that heap.
class ReadyQueue {
 public:
  // `step`: as time_step() gives it (0: none); `max_delay`: how far past the current time push() can ever be called.
  ReadyQueue(double step, double max_delay)
      : use_ring_(step > 0.0 && max_delay / step <= kMaxRingDelay), by_rank_(step < 1.0), per_step_(1.0 / step),
        buckets_(use_ring_ ? ring_size(max_delay / step) : 0), mask_(buckets_.empty() ? 0 : buckets_.size() - 1) {}

  bool empty() const { return use_ring_ ? size_ == 0 : heap_.empty(); }

  void push(double time, int rank) {
    if (!use_ring_) {
      heap_.push({time, rank});
      return;
    }
    std::vector<int>& bucket = buckets_[static_cast<size_t>(time * per_step_) & mask_];
    bucket.push_back(rank);
    if (by_rank_) restore_rank_order(bucket);
    ++size_;
  }

  // Requires !empty().
  std::pair<double, int> pop() {
    if (!use_ring_) {
      const auto top = heap_.top();
      heap_.pop();
      return top;
    }
    return by_rank_ ? pop_lowest_rank() : pop_first_pushed();
  }

 private:
  static constexpr double kMaxRingDelay = 4096;

  // A power of two above the look-ahead, so that live time steps never share a bucket.
  static size_t ring_size(double max_delay) {
    size_t size = 2;
    while (static_cast<double>(size) < std::ceil(max_delay) + 2) size *= 2;
    return size;
  }

  // Out of line, so that push() stays small enough to inline into the dependency run's loop on the unit-cost path.
  __attribute__((noinline)) static void restore_rank_order(std::vector<int>& bucket) {
    std::push_heap(bucket.begin(), bucket.end(), std::greater<int>());
  }

  std::pair<double, int> pop_first_pushed() {
    while (read_ >= buckets_[current_ & mask_].size()) {
      buckets_[current_ & mask_].clear();  // keeps its capacity for the time step that reuses it
      ++current_;
      read_ = 0;
    }
    --size_;
    return {static_cast<double>(current_), buckets_[current_ & mask_][read_++]};
  }

  std::pair<double, int> pop_lowest_rank() {
    while (buckets_[current_ & mask_].empty()) ++current_;
    std::vector<int>& bucket = buckets_[current_ & mask_];
    std::pop_heap(bucket.begin(), bucket.end(), std::greater<int>());
    const int rank = bucket.back();
    bucket.pop_back();
    --size_;
    return {static_cast<double>(current_) / per_step_, rank};
  }

  using Entry = std::pair<double, int>;  // (time, rank)
  const bool use_ring_;
  const bool by_rank_;     // ties to the lower rank (every step but 1)
  const double per_step_;  // time steps per time unit
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap_;
  std::vector<std::vector<int>> buckets_;
  const size_t mask_;
  size_t current_ = 0;  // the time step being handed out
  size_t read_ = 0;     // push order: the next entry of the current bucket
  size_t size_ = 0;
};

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
