// Internal: each compute action's latest start time, the latest it may start without lengthening the compute-only
// makespan (a backward pass over the same data dependencies the dependency run follows forward). The rendezvous
// placement uses it to decide which of two ranks may wait for the other.
#pragma once

#include <vector>

#include "core/schedule/action.h"
#include "core/schedule/blocked_table.h"
#include "core/schedule/cost_model.h"
#include "core/schedule/schedule.h"

namespace sluice {
namespace schedule {
namespace detail {

class LatestStarts {
 public:
  // `compute` must be a compute-only schedule that runs (lower() checks that first); `makespan` its simulated one.
  LatestStarts(const Schedule& compute, const CostModel& costs, double makespan);

  double of(const Action& compute_action) const {
    return latest_[row(compute_action.kind)][index(compute_action.stage, compute_action.microbatch)];
  }

 private:
  static int row(ActionKind kind) { return kind == ActionKind::F ? 0 : kind == ActionKind::W ? 2 : 1; }
  // Rows are stages (blocked_table.h): the play asks for neighbouring stages' entries at about the same time.
  size_t index(int stage, int microbatch) const {
    return blocked_index(static_cast<size_t>(stage), static_cast<size_t>(stages_), microbatch);
  }
  bool settle_rank(const Schedule& compute, int rank, double makespan, std::vector<int>& woken);

  int stages_;
  CostModel costs_;
  std::vector<double> latest_[3];  // F, B or I, W; by (stage, micro-batch); NaN until known
  std::vector<size_t> remaining_;  // per rank: compute actions not yet settled (its list's prefix length)
  std::vector<long long> waiting_on_;  // per rank: the (row, index) it stopped at, as row * events + index; -1 if none
};

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
