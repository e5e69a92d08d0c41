// Where a training call stands in its gradient-accumulation window (config optimizer.accumulate = K): calls come
// in windows of K; the first zeroes the gradients, every call adds its micro-batches' gradients, and only the K-th
// runs the data-parallel sum, clipping and the optimizer step. Every call of a window must pass the same batch:
// the same global batch (rows × data-parallel replicas), which is what a checkpoint saved in the middle of a window
// keeps, so that a restart under another replica count still checks the rest of the window against it.
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
  // The samples (all replicas) each call of the current window passes: 0 at a step boundary or when unknown.
  int64_t call_samples() const { return position_ > 0 ? call_samples_ : 0; }
  // Whether the next call starts a window (zeroes the gradients) / ends it (sums, clips and steps).
  bool starts() const { return position_ == 0; }
  bool ends() const { return position_ + 1 == accumulate_; }

  // Error(kInvalidArgument) when a call in the middle of a window passes `rows` rows on each of `replicas`
  // replicas, and that is another global batch than the window's earlier calls passed (unknown only after a
  // restore from a file written before the batch was saved: any batch is taken then).
  void check_batch(int64_t rows, int replicas = 1) const;
  // A call of `rows` rows per replica succeeded: the window moves on, or closes when the call ended it.
  void advance(int64_t rows, int replicas = 1);
  // A call failed: the window's partial sums are dropped, the next call starts a new window.
  void drop() { position_ = 0; }
  // A checkpoint's position (0..accumulate-1) and the samples per call of its window (0: not saved, any batch).
  void restore(int position, int64_t call_samples = 0);

 private:
  int accumulate_;
  int position_ = 0;
  int64_t call_samples_ = 0;  // rows × replicas of the window's calls; 0: unknown
};

}  // namespace sluice::runtime
