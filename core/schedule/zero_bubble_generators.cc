// ZB-H1 (arXiv 2401.10241): backward split into I (input gradient, on the critical path) and W (weight gradient,
// deferred into bubbles). W of a stage always runs in micro-batch order so gradient accumulation adds
// contributions in the same order as a sequential run. ZB-V is in zero_bubble_v_generator.cc.
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

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
