#include "core/runtime/accumulation_window.h"

#include <string>

#include "core/common/error.h"

namespace sluice::runtime {

void AccumulationWindow::check_batch(int64_t rows) const {
  if (position_ > 0 && rows_ != 0 && rows != rows_) {
    // Same on every rank (the call's arguments were agreed), so every rank refuses alike.
    throw Error(ErrorCode::kInvalidArgument,
                "batch of " + std::to_string(rows) + " rows in call " + std::to_string(position_ + 1) + " of " +
                    std::to_string(accumulate_) + " of an accumulation window whose calls pass " +
                    std::to_string(rows_) + " rows; every call of a window (optimizer.accumulate) must pass the same "
                    "batch");
  }
}

void AccumulationWindow::advance(int64_t rows) {
  if (ends()) {
    position_ = 0;
    return;
  }
  rows_ = rows;
  ++position_;
}

void AccumulationWindow::restore(int position) {
  if (position < 0 || position >= accumulate_) {
    throw Error(ErrorCode::kInternal, "accumulation position " + std::to_string(position) + " outside a window of " +
                                          std::to_string(accumulate_) + " calls");
  }
  position_ = position;
  rows_ = 0;
}

}  // namespace sluice::runtime
