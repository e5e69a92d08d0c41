// Internal: the greedy ZB-V order (zero_bubble_v_greedy.cc) that zero_bubble_v() weighs against its fixed phases
// when m < 2p - 1.
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "core/schedule/schedule.h"

namespace sluice {
namespace schedule {
namespace detail {

// One of a rank's four non-W choices: F or I of chunk 0 (the V's descending arm) or chunk 1.
struct Piece {
  ActionKind kind;
  int chunk;
};

// Ranks run the first ready piece of `priority`, else a ready W; rank r starts no forward while it holds cap[r]
// (stage, micro-batch) pairs. nullopt if the play-out stalls or does not end by time `deadline` (F = I = W = 1).
std::optional<Schedule> zero_bubble_v_greedy(int ranks, int microbatches, const std::array<Piece, 4>& priority,
                                             const std::vector<int>& cap, int deadline);

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
