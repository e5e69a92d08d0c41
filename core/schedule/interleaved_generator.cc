// Interleaved 1F1B (Megatron-LM, arXiv 2104.04473) for any number of micro-batches, in the form PyTorch's
// ScheduleInterleaved1F1B runs it. Micro-batches go in rounds ("groups"); a rank runs each round's forwards chunk
// by chunk (depth first) and its backwards in the reverse chunk order. Megatron needs m to be a multiple of p; like
// PyTorch we use max(1, m / p) rounds, so every round holds at least p micro-batches when m >= p and a single round
// of m < p otherwise. Where PyTorch refuses (m not a multiple of the number of rounds) the rounds differ in size
// by one, the larger ones first: a rank's warm-up covers its first round's other chunks, so it must be the largest
// (a larger later round would need a backward whose forward is still to come).
#include <algorithm>

#include "core/schedule/generator_kernels.h"

namespace sluice {
namespace schedule {
namespace detail {
namespace {

struct ChunkStep {
  int chunk;
  int microbatch;
};

// The order of a rank's forwards (or backwards) as (chunk, micro-batch); the same for every rank.
std::vector<ChunkStep> round_order(int microbatches, int chunks, const std::vector<int>& rounds, bool forward) {
  std::vector<ChunkStep> order;
  order.reserve(static_cast<size_t>(microbatches) * chunks);
  int first = 0;
  for (const int size : rounds) {
    for (int step = 0; step < chunks; ++step) {
      const int chunk = forward ? step : chunks - 1 - step;
      for (int mb = first; mb < first + size; ++mb) order.push_back({chunk, mb});
    }
    first += size;
  }
  return order;
}

std::vector<int> round_sizes(int ranks, int microbatches) {
  const int rounds = std::max(1, microbatches / ranks);
  std::vector<int> sizes(rounds, microbatches / rounds);
  for (int i = 0; i < microbatches % rounds; ++i) ++sizes[i];
  return sizes;
}

}  // namespace

Schedule interleaved_one_f_one_b(int ranks, int microbatches, int chunks) {
  Schedule schedule = empty_schedule("interleaved", ranks, microbatches, chunks, looped_placement(ranks, chunks));
  const std::vector<int> rounds = round_sizes(ranks, microbatches);
  const std::vector<ChunkStep> forwards = round_order(microbatches, chunks, rounds, true);
  const std::vector<ChunkStep> backwards = round_order(microbatches, chunks, rounds, false);
  const int total = microbatches * chunks;
  for (int rank = 0; rank < ranks; ++rank) {
    auto& list = schedule.actions[rank];
    list.reserve(2 * static_cast<size_t>(total));
    const auto push = [&](const ChunkStep& step, ActionKind kind) {
      list.push_back({step.chunk * ranks + rank, kind, step.microbatch});
    };
    // Warm-up: the first round's forwards of every chunk but the last, plus two per hop to the last rank (its
    // first backward needs one forward and one backward per hop). Even with a single round (m <= p) later ranks
    // start their backwards early: waiting for all forwards would hold every micro-batch without finishing sooner.
    const int warmup = std::min((chunks - 1) * rounds.front() + 2 * (ranks - 1 - rank), total);
    int next_forward = 0;
    int next_backward = 0;
    while (next_forward < warmup) push(forwards[next_forward++], ActionKind::F);
    while (next_forward < total) {
      push(forwards[next_forward++], ActionKind::F);
      push(backwards[next_backward++], ActionKind::B);
    }
    while (next_backward < total) push(backwards[next_backward++], ActionKind::B);
  }
  return schedule;
}

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
