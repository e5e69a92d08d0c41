// The run's data position: how many samples (all replicas together) the training calls so far have trained on.
// It is the global sample index of the next call's first sample, which keys dropout masks (StepData::first_sample),
// and it is saved in checkpoints as /train/data_position, so the index stays right for calls of any size and across
// restarts.
//
// A call that fails drops its whole accumulation window (Trainer::train_step), so the position goes back to the
// window's start: the window's calls are trained again from there with the same indices.
//
// Checkpoints written before the position counted samples stored the step count there (the data sources are
// addressed by step). Loading one leaves the position unknown until the next call, which derives it as those
// versions did: (step * K + window position) * the call's global batch, every call being the same size.
#pragma once

#include <cstdint>

namespace sluice::runtime {

class DataPosition {
 public:
  // At the start of a call that is call `window_position` of its window (every call of a window passes the same
  // batch, `global_call_batch` = rows x replicas): derives an unknown position and notes where the window began.
  void begin_call(uint64_t step, int accumulate, int window_position, int64_t global_call_batch);
  // The first sample of the current call (after begin_call).
  uint64_t samples() const { return samples_; }
  void advance(int64_t global_call_batch) { samples_ += static_cast<uint64_t>(global_call_batch); }
  // The call failed: its window is dropped, the next call starts where the window began.
  void drop_window() { samples_ = window_start_; }

  bool known() const { return known_; }
  // A checkpoint load: the saved count, or (known = false) a file whose data_position is the step count.
  void restore(uint64_t samples, bool known) {
    samples_ = known ? samples : 0;
    window_start_ = samples_;
    known_ = known;
  }

 private:
  uint64_t samples_ = 0;
  uint64_t window_start_ = 0;
  bool known_ = true;
};

}  // namespace sluice::runtime
