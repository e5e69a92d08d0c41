// Internal: the rendezvous play's queue of rank wake-ups. Each rank has at most one live wake-up, the one pushed
// last (a push replaces the rank's earlier one), and they come out by (time, rank): the order the play's results
// depend on. With times on a step (ready_queue.h) and a bounded look-ahead, each time step's bucket of the ring is a
// bitset of ranks, so a push sets a bit and a pop takes the lowest one; the heap of (time, rank, version) this
// replaces spent most of its time moving entries, and every replaced wake-up stayed in it until popped.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/schedule/ready_queue.h"

namespace sluice {
namespace schedule {
namespace detail {

class RankWakeups {
 public:
  // `step`: as time_step() gives it (0: none); `max_delay`: how far past the time last popped a push can be.
  RankWakeups(int ranks, double step, double max_delay)
      : use_ring_(step > 0.0 && max_delay / step <= kMaxRingDelay), per_step_(use_ring_ ? 1.0 / step : 0.0),
        step_(use_ring_ ? step : 0.0),
        words_((static_cast<size_t>(ranks) + 63) / 64), buckets_(use_ring_ ? ring_size(max_delay / step) : 0),
        mask_(buckets_ == 0 ? 0 : buckets_ - 1), bits_(buckets_ * words_, 0), counts_(buckets_, 0),
        live_step_(ranks, kNone), version_(ranks, 0), heap_(0.0, 0.0, Ties::kLowestFirst) {}

  void push(double time, int rank) {
    if (!use_ring_) {
      heap_.push(time, static_cast<uint64_t>(rank) << 32 | ++version_[rank]);
      return;
    }
    const size_t at = static_cast<size_t>(time * per_step_);
    live_step_[rank] = at;
    uint64_t& word = bits_[(at & mask_) * words_ + static_cast<size_t>(rank) / 64];
    const uint64_t bit = uint64_t{1} << (rank % 64);
    if (word & bit) return;  // already there: the earlier wake-up it replaces was due at the same time
    word |= bit;
    ++counts_[at & mask_];
    ++size_;
  }

  // The next live wake-up; false when none is left.
  bool pop(double& time, int& rank) { return use_ring_ ? pop_ring(time, rank) : pop_heap(time, rank); }

 private:
  static constexpr size_t kNone = ~size_t{0};

  bool pop_ring(double& time, int& rank) {
    while (size_ > 0) {
      while (counts_[current_ & mask_] == 0) ++current_;
      uint64_t* words = &bits_[(current_ & mask_) * words_];
      size_t w = 0;
      while (words[w] == 0) ++w;
      rank = static_cast<int>(w * 64 + static_cast<size_t>(__builtin_ctzll(words[w])));
      words[w] &= words[w] - 1;
      --counts_[current_ & mask_];
      --size_;
      if (live_step_[rank] != current_) continue;  // replaced by a later push
      live_step_[rank] = kNone;
      time = static_cast<double>(current_) * step_;
      return true;
    }
    return false;
  }

  bool pop_heap(double& time, int& popped) {
    while (!heap_.empty()) {
      const auto [at, entry] = heap_.pop();
      const int rank = static_cast<int>(entry >> 32);
      if (static_cast<unsigned>(entry) != version_[rank]) continue;  // replaced by a later push
      time = at;
      popped = rank;
      return true;
    }
    return false;
  }

  const bool use_ring_;
  const double per_step_;  // time steps per time unit
  const double step_;      // a power of two (time_step()), so a step count times it is exact
  const size_t words_;     // per bucket: one bit per rank
  const size_t buckets_;
  const size_t mask_;
  std::vector<uint64_t> bits_;      // by bucket, then rank
  std::vector<size_t> counts_;      // by bucket: bits set, live or replaced
  std::vector<size_t> live_step_;   // per rank: the time step of its live wake-up, kNone if none (ring)
  std::vector<unsigned> version_;   // per rank: its last push's number (heap); older entries are stale
  TimedQueue<uint64_t> heap_;       // without a step: ordered by (time, rank, version)
  size_t current_ = 0;              // the time step being handed out
  size_t size_ = 0;                 // bits set
};

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
