// A greedy ZB-V order for few micro-batches (m < 2p - 1), where the V never fills and PyTorch's fixed phases leave
// gaps (p=16, m=16: 126 units). It plays the schedule out in unit time steps (F = I = W = 1): at each step every
// rank runs the first action of its priority list that is ready (its inputs finished in an earlier step), else the
// oldest W it can run, else waits. A rank starts no forward while it holds its cap of (stage, micro-batch) pairs;
// with the fixed phases' own peaks as caps it needs no more memory on any rank and is shorter (p=16, m=16: 117).
// Each stage's F, I and W run in micro-batch order, so W adds gradients in the sequential order.
#include "core/schedule/zero_bubble_v_greedy.h"

#include "core/schedule/generator_kernels.h"

namespace sluice {
namespace schedule {
namespace detail {
namespace {

constexpr int kNotYet = -1;

class GreedyV {
 public:
  GreedyV(int ranks, int microbatches, const std::vector<int>& cap)
      : ranks_(ranks), stages_(2 * ranks), microbatches_(microbatches), cap_(cap),
        forward_end_(static_cast<size_t>(stages_) * microbatches, kNotYet),
        input_end_(static_cast<size_t>(stages_) * microbatches, kNotYet),
        next_(static_cast<size_t>(stages_) * 3, 0), inflight_(ranks, 0) {}

  // False if a step left every rank waiting: then nothing is under way and no later step differs (not seen with
  // the caps and priorities zero_bubble_v uses; it then keeps the fixed-phase order). False too once the play-out
  // cannot end by `deadline`: zero_bubble_v passes the best length so far, and a play-out runs each action no
  // earlier than the event simulator would, so it could not win; at p = 512 most play-outs stop early.
  bool run(const std::array<Piece, 4>& priority, int deadline, Schedule& schedule) {
    const int64_t total = 6LL * ranks_ * microbatches_;
    int64_t placed = 0;
    bool idle_before = false;
    for (int time = 0; placed < total; ++time) {
      if (time >= deadline) return false;  // what is left ends after time + 1 > deadline
      bool acted = false;
      for (int rank = 0; rank < ranks_; ++rank) {
        const std::optional<Piece> piece = choose(rank, priority, time);
        if (!piece) continue;  // nothing ready: the rank waits this step
        place(rank, *piece, time, schedule);
        acted = true;
        ++placed;
      }
      if (!acted && idle_before) return false;
      idle_before = !acted;
    }
    return true;
  }

 private:
  int stage_of(int rank, int chunk) const { return chunk == 0 ? rank : stages_ - 1 - rank; }
  size_t at(int stage, int microbatch) const { return static_cast<size_t>(stage) * microbatches_ + microbatch; }
  int& next(int stage, ActionKind kind) {
    return next_[static_cast<size_t>(stage) * 3 + (kind == ActionKind::F ? 0 : kind == ActionKind::I ? 1 : 2)];
  }
  bool finished(const std::vector<int>& ends, int stage, int microbatch, int time) const {
    const int end = ends[at(stage, microbatch)];
    return end != kNotYet && end <= time;
  }

  bool ready(int rank, const Piece& piece, int time) {
    const int stage = stage_of(rank, piece.chunk);
    const int mb = next(stage, piece.kind);
    if (mb >= microbatches_) return false;
    switch (piece.kind) {
      case ActionKind::F:
        return inflight_[rank] < cap_[rank] && (stage == 0 || finished(forward_end_, stage - 1, mb, time));
      case ActionKind::I:
        return finished(forward_end_, stage, mb, time) &&
               (stage == stages_ - 1 || finished(input_end_, stage + 1, mb, time));
      default:
        return finished(input_end_, stage, mb, time);
    }
  }

  std::optional<Piece> choose(int rank, const std::array<Piece, 4>& priority, int time) {
    for (const Piece& piece : priority)
      if (ready(rank, piece, time)) return piece;
    for (const Piece piece : {Piece{ActionKind::W, 1}, Piece{ActionKind::W, 0}})
      if (ready(rank, piece, time)) return piece;
    return std::nullopt;
  }

  void place(int rank, const Piece& piece, int time, Schedule& schedule) {
    const int stage = stage_of(rank, piece.chunk);
    const int mb = next(stage, piece.kind)++;
    schedule.actions[rank].push_back({stage, piece.kind, mb});
    if (piece.kind == ActionKind::F) {
      forward_end_[at(stage, mb)] = time + 1;
      ++inflight_[rank];
    } else if (piece.kind == ActionKind::I) {
      input_end_[at(stage, mb)] = time + 1;
    } else {
      --inflight_[rank];
    }
  }

  const int ranks_, stages_, microbatches_;
  const std::vector<int>& cap_;
  std::vector<int> forward_end_, input_end_;  // by (stage, micro-batch): the step it ends, or kNotYet
  std::vector<int> next_;                     // by (stage, F/I/W): the next micro-batch
  std::vector<int> inflight_;                 // by rank: F done, W not yet
};

}  // namespace

std::optional<Schedule> zero_bubble_v_greedy(int ranks, int microbatches, const std::array<Piece, 4>& priority,
                                             const std::vector<int>& cap, int deadline) {
  Schedule schedule = empty_schedule("zb-v", ranks, microbatches, 2, v_placement(ranks));
  for (auto& list : schedule.actions) list.reserve(6 * static_cast<size_t>(microbatches));
  if (!GreedyV(ranks, microbatches, cap).run(priority, deadline, schedule)) return std::nullopt;
  return schedule;
}

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
