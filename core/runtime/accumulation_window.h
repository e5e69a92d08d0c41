// Where a training call stands in its gradient-accumulation window (config optimizer.accumulate = K): calls come
// in windows of K; the first zeroes the gradients, every call adds its micro-batches' gradients, and only the K-th
// runs the data-parallel sum, clipping and the optimizer step. Every call of a window must pass the same batch.
// Pure bookkeeping: no tensors, no messages, so the rules are tested on their own (tests/runtime).
#pragma once

#include <cstdint>

namespace sluice::runtime {

class AccumulationWindow {
 public:
  explicit AccumulationWindow(int accumulate = 1) : accumulate_(accumulate < 1 ? 1 : accumulate) {}

  int accumulate() const { return accumulate_; }
  // Calls of the current window already done: 0 at a step boundary, else 1..accumulate-1.
  int position() const { return position_; }
  // Whether the next call starts a window (zeroes the gradients) / ends it (sums, clips and steps).
  bool starts() const { return position_ == 0; }
  bool ends() const { return position_ + 1 == accumulate_; }

  // Error(kInvalidArgument) when a call in the middle of a window passes another batch than the window's earlier
  // calls (unknown right after a restore: any batch is taken then).
  void check_batch(int64_t rows) const;
  // A call of `rows` rows succeeded: the window moves on, or closes when the call ended it.
  void advance(int64_t rows);
  // A call failed: the window's partial sums are dropped, the next call starts a new window.
  void drop() { position_ = 0; }
  // A checkpoint's position (0..accumulate-1); the window's batch is unknown until its next call.
  void restore(int position);

 private:
  int accumulate_;
  int position_ = 0;
  int64_t rows_ = 0;  // rows of the window's calls; 0: unknown
};

}  // namespace sluice::runtime
