// GPipe and 1F1B, with fused backward (B). Interleaved 1F1B is in interleaved_generator.cc.
#include <algorithm>

#include "core/schedule/generator_kernels.h"

namespace sluice {
namespace schedule {
namespace detail {

Schedule gpipe(int ranks, int microbatches) {
  Schedule schedule = empty_schedule("gpipe", ranks, microbatches, 1, looped_placement(ranks, 1));
  for (int rank = 0; rank < ranks; ++rank) {
    auto& list = schedule.actions[rank];
    list.reserve(2 * static_cast<size_t>(microbatches));
    for (int mb = 0; mb < microbatches; ++mb) list.push_back({rank, ActionKind::F, mb});
    for (int mb = 0; mb < microbatches; ++mb) list.push_back({rank, ActionKind::B, mb});
  }
  return schedule;
}

Schedule one_f_one_b(int ranks, int microbatches) {
  Schedule schedule = empty_schedule("1f1b", ranks, microbatches, 1, looped_placement(ranks, 1));
  for (int rank = 0; rank < ranks; ++rank) {
    auto& list = schedule.actions[rank];
    list.reserve(2 * static_cast<size_t>(microbatches));
    // Megatron's warm-up: rank r runs p-r-1 forwards before its first backward.
    const int warmup = std::min(ranks - rank - 1, microbatches);
    int next_forward = 0;
    int next_backward = 0;
    for (; next_forward < warmup; ++next_forward) list.push_back({rank, ActionKind::F, next_forward});
    for (; next_forward < microbatches; ++next_forward, ++next_backward) {
      list.push_back({rank, ActionKind::F, next_forward});
      list.push_back({rank, ActionKind::B, next_backward});
    }
    for (; next_backward < microbatches; ++next_backward) list.push_back({rank, ActionKind::B, next_backward});
  }
  return schedule;
}

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
