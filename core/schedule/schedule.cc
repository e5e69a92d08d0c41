#include "core/schedule/schedule.h"

namespace sluice {
namespace schedule {

std::vector<int> looped_placement(int ranks, int chunks) {
  std::vector<int> placement(static_cast<size_t>(ranks) * chunks);
  for (size_t stage = 0; stage < placement.size(); ++stage) placement[stage] = static_cast<int>(stage) % ranks;
  return placement;
}

std::vector<int> v_placement(int ranks) {
  std::vector<int> placement(static_cast<size_t>(2) * ranks);
  for (int rank = 0; rank < ranks; ++rank) {
    placement[rank] = rank;
    placement[2 * ranks - 1 - rank] = rank;
  }
  return placement;
}

bool is_lowered(const Schedule& schedule) {
  for (const auto& rank_actions : schedule.actions)
    for (const Action& action : rank_actions)
      if (is_communication(action.kind)) return true;
  return false;
}

Schedule compute_only(const Schedule& schedule) {
  Schedule result = schedule;
  for (auto& rank_actions : result.actions) {
    std::vector<Action> kept;
    kept.reserve(rank_actions.size());
    for (const Action& action : rank_actions)
      if (is_compute(action.kind)) kept.push_back(action);
    rank_actions.swap(kept);
  }
  return result;
}

}  // namespace schedule
}  // namespace sluice
