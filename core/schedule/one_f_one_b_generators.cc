// GPipe, 1F1B and Megatron's interleaved 1F1B. All use fused backward (B).
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

namespace {

// Megatron's mapping from the k-th forward (or backward) step of a rank to (chunk, micro-batch): micro-batches
// go in groups of `ranks`; each group visits every chunk before the next group starts.
Action interleaved_step(int step, bool forward, int rank, int ranks, int chunks) {
  const int group_span = ranks * chunks;
  const int chunk_in_order = (step / ranks) % chunks;
  const int chunk = forward ? chunk_in_order : chunks - 1 - chunk_in_order;
  const int microbatch = (step / group_span) * ranks + step % ranks;
  return {chunk * ranks + rank, forward ? ActionKind::F : ActionKind::B, microbatch};
}

}  // namespace

Schedule interleaved_one_f_one_b(int ranks, int microbatches, int chunks) {
  Schedule schedule =
      empty_schedule("interleaved", ranks, microbatches, chunks, looped_placement(ranks, chunks));
  const int total_steps = microbatches * chunks;
  for (int rank = 0; rank < ranks; ++rank) {
    auto& list = schedule.actions[rank];
    list.reserve(2 * static_cast<size_t>(total_steps));
    // Megatron: warm-up 2(p-r-1) + (v-1)p forwards; with a single group (m == p) everything is warm-up.
    int warmup = std::min(2 * (ranks - rank - 1) + (chunks - 1) * ranks, total_steps);
    if (microbatches == ranks) warmup = total_steps;
    int next_forward = 0;
    int next_backward = 0;
    for (; next_forward < warmup; ++next_forward)
      list.push_back(interleaved_step(next_forward, true, rank, ranks, chunks));
    for (; next_forward < total_steps; ++next_forward, ++next_backward) {
      list.push_back(interleaved_step(next_forward, true, rank, ranks, chunks));
      list.push_back(interleaved_step(next_backward, false, rank, ranks, chunks));
    }
    for (; next_backward < total_steps; ++next_backward)
      list.push_back(interleaved_step(next_backward, false, rank, ranks, chunks));
  }
  return schedule;
}

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
