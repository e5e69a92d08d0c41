// Zero-bubble schedules (arXiv 2401.10241): backward split into I (input gradient, on the critical path) and
// W (weight gradient, deferred into bubbles). W of a stage always runs in micro-batch order so gradient
// accumulation adds contributions in the same order as a sequential run.
#include <algorithm>

#include "core/schedule/generator_kernels.h"

namespace sluice {
namespace schedule {
namespace detail {

Schedule zero_bubble_h1(int ranks, int microbatches) {
  Schedule schedule = empty_schedule("zb-h1", ranks, microbatches, 1, looped_placement(ranks, 1));
  // Every rank keeps at most `ranks` micro-batches in flight (1F1B's peak, reached by its rank 0). Rank r starts
  // with p-r forwards (1F1B's warm-up plus the first steady one), then runs I, and a W only when one more F
  // would exceed the cap. In the cool-down each I is followed by the oldest W, which fills the gap while the
  // next I travels back from the later stages. With F=I=W this gives idle time (p-1) per rank.
  const int cap = ranks;
  for (int rank = 0; rank < ranks; ++rank) {
    auto& list = schedule.actions[rank];
    list.reserve(3 * static_cast<size_t>(microbatches));
    int forwards = 0, inputs = 0, weights = 0;
    const int warmup = std::min(ranks - rank, microbatches);
    for (; forwards < warmup; ++forwards) list.push_back({rank, ActionKind::F, forwards});
    while (inputs < microbatches) {
      list.push_back({rank, ActionKind::I, inputs++});
      if (forwards < microbatches) {
        if (forwards - weights >= cap) list.push_back({rank, ActionKind::W, weights++});
        list.push_back({rank, ActionKind::F, forwards++});
      } else if (weights < inputs) {
        list.push_back({rank, ActionKind::W, weights++});
      }
    }
    while (weights < microbatches) list.push_back({rank, ActionKind::W, weights++});
  }
  return schedule;
}

namespace {

// Builds one rank's ZB-V list; chunk 0 is the descending arm of the V (stage r), chunk 1 the ascending arm
// (stage 2p-1-r). Shaped after PyTorch's ScheduleZBVZeroBubble, with each phase clamped to the micro-batches
// that exist so that m >= p suffices.
class ZeroBubbleVRank {
 public:
  ZeroBubbleVRank(int ranks, int rank, int microbatches, std::vector<Action>& list)
      : ranks_(ranks), rank_(rank), microbatches_(microbatches), first_(rank), second_(2 * ranks - 1 - rank),
        list_(list) {}

  void build() {
    // Warm-up: fill the V's descending arm, then alternate arms until the first backward can start.
    for (int i = 0; i < 2 * (ranks_ - rank_) - 1; ++i) forward_first();
    for (int i = 0; i < rank_; ++i) {
      forward_second();
      forward_first();
    }
    for (int i = 0; i < ranks_ - rank_; ++i) {
      forward_second();
      backward_second_with_weight();
    }
    // Steady state: one F and one I+W per arm.
    while (forwards_second_ < microbatches_ || forwards_first_ < microbatches_) {
      forward_first();
      backward_first_with_weight();
      forward_second();
      backward_second_with_weight();
    }
    // Cool-down: I's first (critical path); keep at most `rank` chunk-0 W's deferred so they fill the gaps.
    while (inputs_first_ < microbatches_ || inputs_second_ < microbatches_) {
      if (inputs_second_ < microbatches_) push(second_, ActionKind::I, inputs_second_);
      if (inputs_first_ < inputs_second_) push(first_, ActionKind::I, inputs_first_);
      if (inputs_first_ == microbatches_ && inputs_second_ == microbatches_) break;
      if (inputs_first_ - weights_first_ > rank_) push(first_, ActionKind::W, weights_first_);
    }
    while (weights_second_ < microbatches_) push(second_, ActionKind::W, weights_second_);
    while (weights_first_ < microbatches_) push(first_, ActionKind::W, weights_first_);
  }

 private:
  void push(int stage, ActionKind kind, int& counter) { list_.push_back({stage, kind, counter++}); }
  void forward_first() {
    if (forwards_first_ < microbatches_) push(first_, ActionKind::F, forwards_first_);
  }
  void forward_second() {
    if (forwards_second_ < forwards_first_) push(second_, ActionKind::F, forwards_second_);
  }
  void backward_second_with_weight() {
    if (inputs_second_ < forwards_second_) {
      push(second_, ActionKind::I, inputs_second_);
      push(second_, ActionKind::W, weights_second_);
    }
  }
  void backward_first_with_weight() {
    if (inputs_first_ < inputs_second_) {
      push(first_, ActionKind::I, inputs_first_);
      push(first_, ActionKind::W, weights_first_);
    }
  }

  const int ranks_, rank_, microbatches_, first_, second_;
  std::vector<Action>& list_;
  int forwards_first_ = 0, forwards_second_ = 0;
  int inputs_first_ = 0, inputs_second_ = 0;
  int weights_first_ = 0, weights_second_ = 0;
};

}  // namespace

Schedule zero_bubble_v(int ranks, int microbatches) {
  Schedule schedule = empty_schedule("zb-v", ranks, microbatches, 2, v_placement(ranks));
  for (int rank = 0; rank < ranks; ++rank) {
    schedule.actions[rank].reserve(6 * static_cast<size_t>(microbatches));
    ZeroBubbleVRank(ranks, rank, microbatches, schedule.actions[rank]).build();
  }
  return schedule;
}

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
