#include "core/runtime/accumulation_window.h"

#include <string>

#include "core/common/error.h"

namespace sluice::runtime {

void AccumulationWindow::check_batch(int64_t rows, int replicas) const {
  if (position_ == 0 || call_samples_ == 0 || rows * replicas == call_samples_) return;
  // The window's batch in the caller's terms: rows per replica, or, when the replica count changed at a restart
  // and the window's samples cannot be shared among the replicas now, the window's global batch.
  const std::string window_batch =
      call_samples_ % replicas == 0
          ? std::to_string(call_samples_ / replicas) + " rows"
          : std::to_string(call_samples_) + " samples over all replicas, which " + std::to_string(replicas) +
                " replicas cannot share evenly (finish the window under its own replica count, or restart from a "
                "checkpoint saved at a step boundary)";
  // Same on every rank (the call's arguments were agreed), so every rank refuses alike.
  throw Error(ErrorCode::kInvalidArgument,
              "batch of " + std::to_string(rows) + " rows in call " + std::to_string(position_ + 1) + " of " +
                  std::to_string(accumulate_) + " of an accumulation window whose calls pass " + window_batch +
                  "; every call of a window (optimizer.accumulate) must pass the same batch");
}

void AccumulationWindow::advance(int64_t rows, int replicas) {
  if (ends()) {
    position_ = 0;
    return;
  }
  call_samples_ = rows * replicas;
  ++position_;
}

void AccumulationWindow::restore(int position, int64_t call_samples) {
  if (position < 0 || position >= accumulate_) {
    throw Error(ErrorCode::kInternal, "accumulation position " + std::to_string(position) + " outside a window of " +
                                          std::to_string(accumulate_) + " calls");
  }
  if (call_samples < 0) {
    throw Error(ErrorCode::kInternal, "accumulation window of " + std::to_string(call_samples) + " samples per call");
  }
  position_ = position;
  call_samples_ = position > 0 ? call_samples : 0;
}

}  // namespace sluice::runtime
