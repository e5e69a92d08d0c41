// Internal: lowering's messages waiting to be placed, keyed by the whole-number time at which their data is
// ready. Both ends of a message are placed when the serialization reaches that time; within one time step
// messages keep creation order, identically for both ends.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "core/common/error.h"
#include "core/schedule/action.h"
#include "core/schedule/kind_traits.h"
#include "core/schedule/schedule.h"

namespace sluice {
namespace schedule {
namespace detail {

// One cross-rank hand-over, stored as its SEND end (the RECV end follows from the stage's neighbour), so that
// the calendar moves 16 bytes per message instead of two full actions and two ranks.
struct PendingMessage {
  int sender;
  int stage;
  int microbatch;
  ActionKind send_kind;  // SEND_F or SEND_B
};

// The hand-over `action` (run on `rank`) starts, as its SEND end; false when the data stays on the rank.
inline bool message_after(const Schedule& compute, int rank, const Action& action, PendingMessage& message) {
  const int s = action.stage;
  if (action.kind == ActionKind::F && s < compute.num_stages() - 1 && compute.rank_of(s + 1) != rank) {
    message = {rank, s, action.microbatch, ActionKind::SEND_F};
    return true;
  }
  if (produces_input_gradient(action.kind) && s > 0 && compute.rank_of(s - 1) != rank) {
    message = {rank, s, action.microbatch, ActionKind::SEND_B};
    return true;
  }
  return false;
}

// A ring of per-time-step slots: messages are added at most `max_delay` steps after the last drained time, so
// the live steps never share a slot and slots keep their capacity instead of being allocated every step.
class MessageCalendar {
 public:
  explicit MessageCalendar(int max_delay) : slots_(ring_size(max_delay)), mask_(slots_.size() - 1) {}

  // `ready_at` must be a whole number after the last drained time and at most `max_delay` past it.
  void add(double ready_at, const PendingMessage& message) {
    const size_t step = static_cast<size_t>(ready_at);
    if (step < next_ || step >= next_ + slots_.size())
      throw Error(ErrorCode::kInternal, "lower(): message ready at time " + std::to_string(ready_at) +
                                            " is outside the calendar's window starting at " + std::to_string(next_));
    slots_[step & mask_].push_back(message);
    ++pending_;
  }

  // Calls `place` for every message ready at or before `time`, in time order.
  template <typename Place>
  void drain_until(double time, Place place) {
    while (pending_ > 0 && static_cast<double>(next_) <= time) {
      std::vector<PendingMessage>& slot = slots_[next_ & mask_];
      for (const PendingMessage& message : slot) place(message);
      pending_ -= slot.size();
      slot.clear();
      ++next_;
    }
    // Nothing left before `time`: skip the empty steps so the window starts right after it.
    if (pending_ == 0 && std::isfinite(time) && static_cast<double>(next_) <= time)
      next_ = static_cast<size_t>(std::floor(time)) + 1;
  }

 private:
  static size_t ring_size(int max_delay) {
    size_t size = 2;
    while (size < static_cast<size_t>(max_delay) + 2) size *= 2;
    return size;
  }

  std::vector<std::vector<PendingMessage>> slots_;
  const size_t mask_;
  size_t next_ = 0;  // earliest time step not yet drained
  size_t pending_ = 0;
};

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
