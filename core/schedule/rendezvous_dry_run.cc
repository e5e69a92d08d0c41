#include "core/schedule/rendezvous_dry_run.h"

#include <vector>

#include "core/schedule/action.h"

namespace sluice {
namespace schedule {
namespace detail {

Action counterpart(const Action& action) {
  const int s = action.stage, m = action.microbatch, peer = action.peer;
  switch (action.kind) {
    case ActionKind::SEND_F: return {s + 1, ActionKind::RECV_F, m};
    case ActionKind::RECV_F: return {s - 1, ActionKind::SEND_F, m};
    case ActionKind::SEND_B: return {s - 1, ActionKind::RECV_B, m};
    case ActionKind::RECV_B: return {s + 1, ActionKind::SEND_B, m};
    case ActionKind::SEND_SKIP: return {peer, ActionKind::RECV_SKIP, m, s};
    case ActionKind::RECV_SKIP: return {peer, ActionKind::SEND_SKIP, m, s};
    case ActionKind::SEND_SKIP_GRAD: return {peer, ActionKind::RECV_SKIP_GRAD, m, s};
    case ActionKind::RECV_SKIP_GRAD: return {peer, ActionKind::SEND_SKIP_GRAD, m, s};
    default: return action;
  }
}

std::optional<ValidationIssue> rendezvous_dry_run(const Schedule& schedule) {
  std::vector<size_t> position(schedule.ranks, 0);
  std::vector<int> runnable;
  for (int rank = 0; rank < schedule.ranks; ++rank) runnable.push_back(rank);
  auto current = [&](int rank) -> const Action* {
    const auto& list = schedule.actions[rank];
    return position[rank] < list.size() ? &list[position[rank]] : nullptr;
  };
  while (!runnable.empty()) {
    const int rank = runnable.back();
    runnable.pop_back();
    while (const Action* action = current(rank)) {
      if (is_compute(action->kind)) {
        ++position[rank];
        continue;
      }
      const Action partner = counterpart(*action);
      const int peer = schedule.rank_of(partner.stage);
      const Action* peer_action = current(peer);
      if (peer_action == nullptr || *peer_action != partner) break;  // wait; the peer resumes us on arrival
      ++position[rank];
      ++position[peer];
      runnable.push_back(peer);
    }
  }
  for (int rank = 0; rank < schedule.ranks; ++rank) {
    if (const Action* action = current(rank)) {
      const Action partner = counterpart(*action);
      const int peer = schedule.rank_of(partner.stage);
      const Action* peer_action = current(peer);
      return ValidationIssue{rank, static_cast<long>(position[rank]), to_string(*action),
                             "deadlock with blocking send/recv: waits for " + to_string(partner) + " on rank " +
                                 std::to_string(peer) + ", which is blocked at " +
                                 (peer_action ? "action " + std::to_string(position[peer]) + " (" +
                                                    to_string(*peer_action) + ")"
                                              : std::string("the end of its list"))};
    }
  }
  return std::nullopt;
}

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
