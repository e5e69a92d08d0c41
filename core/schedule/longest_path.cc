#include "core/schedule/longest_path.h"

#include <algorithm>
#include <vector>

#include "core/schedule/blocked_table.h"
#include "core/schedule/kind_traits.h"

namespace sluice {
namespace schedule {
namespace detail {
namespace {

constexpr double kNotDone = -1.0;
constexpr size_t kNotWaiting = ~size_t{0};

// Ranks run their lists in order; one stops at an action whose input is not yet produced and is woken by the one
// action that produces it.
class LongestPath {
 public:
  LongestPath(const Schedule& compute, const CostModel& costs)
      : s_(compute), costs_(costs), transfer_(transfer_time(costs)),
        rows_(2 * static_cast<size_t>(compute.num_stages())),
        end_(blocked_table_size(rows_, compute.microbatches), kNotDone), position_(compute.ranks, 0),
        free_at_(compute.ranks, 0.0), waiting_on_(compute.ranks, kNotWaiting) {}

  std::optional<double> run() {
    for (int rank = s_.ranks - 1; rank >= 0; --rank) ready_.push_back(rank);
    while (!ready_.empty()) {
      const int rank = ready_.back();
      ready_.pop_back();
      advance(rank);
    }
    double makespan = 0.0;
    for (int rank = 0; rank < s_.ranks; ++rank) {
      if (position_[rank] < s_.actions[rank].size()) return std::nullopt;
      makespan = std::max(makespan, free_at_[rank]);
    }
    return makespan;
  }

 private:
  // Events are "forward of (s, m) done" (row 2s) and "input gradient of (s, m) done" (row 2s + 1), blocked
  // (blocked_table.h): neighbouring stages touch the same micro-batches at about the same time.
  size_t event(int stage, bool forward, int microbatch) const {
    return blocked_index(static_cast<size_t>(stage) * 2 + (forward ? 0 : 1), rows_, microbatch);
  }

  double cost_of(const Action& a) const {
    return costs_.per_stage.empty() ? compute_cost(costs_, a.kind) : compute_cost(costs_, a.kind, a.stage);
  }

  // When `a` can start on `rank` given the events it needs (the dependency run's rule), or kNotDone when one is
  // not yet produced; `missing` is then that event.
  double start_of(int rank, const Action& a, size_t& missing) const {
    const int m = a.microbatch;
    double start = free_at_[rank];
    // Folds one input into `start`; false when it is not yet produced.
    auto input = [&](int stage, bool forward) {
      const size_t at = event(stage, forward, m);
      const double done_at = end_[at];
      if (done_at == kNotDone) {
        missing = at;
        return false;
      }
      start = std::max(start, done_at + (s_.stage_to_rank[stage] != rank ? transfer_ : 0.0));
      return true;
    };
    ActionInput inputs[2] = {};
    const int count = action_inputs(a, s_.num_stages(), inputs);
    for (int i = 0; i < count; ++i)
      if (!input(inputs[i].stage, inputs[i].forward)) return kNotDone;
    return start;
  }

  void advance(int rank) {
    const std::vector<Action>& list = s_.actions[rank];
    for (size_t& i = position_[rank]; i < list.size(); ++i) {
      const Action& a = list[i];
      size_t missing = 0;
      const double start = start_of(rank, a, missing);
      if (start == kNotDone) {
        waiting_on_[rank] = missing;
        return;
      }
      free_at_[rank] = start + cost_of(a);
      if (a.kind == ActionKind::F)
        publish(event(a.stage, true, a.microbatch), a.stage + 1, free_at_[rank]);
      else if (produces_input_gradient(a.kind))
        publish(event(a.stage, false, a.microbatch), a.stage - 1, free_at_[rank]);
    }
  }

  // Only the rank of `consumer_stage` can be stopped on the event (the producer's own rank is running).
  void publish(size_t at, int consumer_stage, double end) {
    end_[at] = end;
    if (consumer_stage < 0 || consumer_stage >= s_.num_stages()) return;
    const int consumer = s_.stage_to_rank[consumer_stage];
    if (waiting_on_[consumer] != at) return;
    waiting_on_[consumer] = kNotWaiting;
    ready_.push_back(consumer);
  }

  const Schedule& s_;
  const CostModel& costs_;
  const double transfer_;
  const size_t rows_;
  std::vector<double> end_;  // by event
  std::vector<size_t> position_;
  std::vector<double> free_at_;  // end of each rank's last action
  std::vector<size_t> waiting_on_;
  std::vector<int> ready_;
};

}  // namespace

std::optional<double> longest_path_makespan(const Schedule& compute, const CostModel& costs) {
  // A per-stage table of the wrong length is the dependency run's error to report (it names both lengths); the
  // walk would read past the table or ignore its extra entries.
  if (!costs.per_stage.empty() && static_cast<int>(costs.per_stage.size()) != compute.num_stages()) return std::nullopt;
  return LongestPath(compute, costs).run();
}

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
