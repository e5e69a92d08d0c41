#include "core/schedule/latest_start.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/common/error.h"
#include "core/schedule/kind_traits.h"

namespace sluice {
namespace schedule {
namespace detail {

LatestStarts::LatestStarts(const Schedule& compute, const CostModel& costs, double makespan)
    : stages_(compute.num_stages()), costs_(costs), remaining_(compute.ranks) {
  const size_t events = blocked_table_size(static_cast<size_t>(stages_), compute.microbatches);
  for (auto& table : latest_) table.assign(events, std::numeric_limits<double>::quiet_NaN());
  waiting_on_.assign(compute.ranks, -1);
  std::vector<int> ready;
  for (int rank = 0; rank < compute.ranks; ++rank) {
    remaining_[rank] = compute.actions[rank].size();
    ready.push_back(rank);
  }
  // Ranks walk their lists backward; one stops at an action whose successor on another rank is not yet settled.
  while (!ready.empty()) {
    const int rank = ready.back();
    ready.pop_back();
    settle_rank(compute, rank, makespan, ready);
  }
  for (int rank = 0; rank < compute.ranks; ++rank)
    if (remaining_[rank] > 0)
      throw Error(ErrorCode::kInternal, "latest starts: rank " + std::to_string(rank) + " cannot be settled");
}

// Settles `rank`'s actions from its end backward as far as their cross-rank successors are known; ranks stopped on
// an action settled here go into `woken`. Returns whether the rank reached its first action.
bool LatestStarts::settle_rank(const Schedule& compute, int rank, double makespan, std::vector<int>& woken) {
  const auto& list = compute.actions[rank];
  const int stages = compute.num_stages();
  const double transfer = transfer_time(costs_);
  for (size_t& left = remaining_[rank]; left > 0; --left) {
    const Action& a = list[left - 1];
    const double next = left < list.size() ? of(list[left]) : makespan;
    double bound = next;
    int successor = -1;  // the event row (0: F, 1: B/I) and stage of a successor on another rank
    int successor_stage = 0;
    if (a.kind == ActionKind::F && a.stage + 1 < stages && compute.rank_of(a.stage + 1) != rank)
      successor = 0, successor_stage = a.stage + 1;
    else if (produces_input_gradient(a.kind) && a.stage > 0 && compute.rank_of(a.stage - 1) != rank)
      successor = 1, successor_stage = a.stage - 1;
    if (successor >= 0) {
      const size_t at = index(successor_stage, a.microbatch);
      const double later = latest_[successor][at];
      if (std::isnan(later)) {
        waiting_on_[rank] = static_cast<long long>(successor * latest_[0].size() + at);
        return false;
      }
      bound = std::min(bound, later - transfer);
    }
    latest_[row(a.kind)][index(a.stage, a.microbatch)] = bound - compute_cost(costs_, a.kind);
    // The one rank that can be stopped on this action: the one holding its predecessor across the hand-over.
    const int before = a.kind == ActionKind::F ? a.stage - 1 : a.kind == ActionKind::W ? -1 : a.stage + 1;
    if (before < 0 || before >= stages) continue;
    const long long event = static_cast<long long>(row(a.kind) * latest_[0].size() + index(a.stage, a.microbatch));
    const int holder = compute.rank_of(before);
    if (waiting_on_[holder] == event) {
      waiting_on_[holder] = -1;
      woken.push_back(holder);
    }
  }
  return true;
}

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
