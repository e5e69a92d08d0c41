#include "core/schedule/schedule.h"

#include <cctype>

#include "core/common/error.h"

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

std::string to_string(const SkipEdge& skip) { return std::to_string(skip.from) + ">" + std::to_string(skip.to); }

SkipEdge parse_skip_edge(const std::string& text) {
  const size_t mark = text.find('>');
  auto number = [&](const std::string& part) {
    if (part.empty() || part.size() > 9) return -1;
    for (char c : part)
      if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
    return std::stoi(part);
  };
  const int from = mark == std::string::npos ? -1 : number(text.substr(0, mark));
  const int to = mark == std::string::npos ? -1 : number(text.substr(mark + 1));
  if (from < 0 || to < 0)
    throw Error(ErrorCode::kInvalidArgument,
                "bad skip '" + text + "': expected <producer stage>><reader stage>, e.g. 0>5");
  return {from, to};
}

bool crosses_ranks(const Schedule& schedule, const SkipEdge& skip) {
  return schedule.rank_of(skip.from) != schedule.rank_of(skip.to);
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
