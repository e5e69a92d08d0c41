#include "core/schedule/dependency_engine.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <queue>
#include <utility>
#include <vector>

namespace sluice {
namespace schedule {
namespace detail {
namespace {

constexpr double kNotDone = -1.0;
constexpr int64_t kNotWaiting = -1;

bool is_whole(double value) { return std::floor(value) == value && value < 1e9; }

// Hands out (time, rank) in nondecreasing time. With whole-number costs (the unit costs that lowering and the
// validator use) it keeps one bucket per time step, O(1) per operation, instead of a heap's O(log ranks):
// that difference decides whether p=512, m=4096 lowers in well under a second.
class ReadyQueue {
 public:
  explicit ReadyQueue(bool whole_times) : whole_times_(whole_times) {}

  bool empty() const { return whole_times_ ? size_ == 0 : heap_.empty(); }

  void push(double time, int rank) {
    if (!whole_times_) {
      heap_.push({time, rank});
      return;
    }
    const size_t slot = static_cast<size_t>(time);
    if (slot >= buckets_.size()) buckets_.resize(std::max(slot + 1, 2 * buckets_.size()));
    buckets_[slot].push_back(rank);
    ++size_;
  }

  std::pair<double, int> pop() {
    if (!whole_times_) {
      const auto top = heap_.top();
      heap_.pop();
      return top;
    }
    while (read_ >= buckets_[current_].size()) {
      std::vector<int>().swap(buckets_[current_]);  // release: the run only moves forward in time
      ++current_;
      read_ = 0;
    }
    --size_;
    return {static_cast<double>(current_), buckets_[current_][read_++]};
  }

 private:
  using Entry = std::pair<double, int>;  // (time, rank): ties go to the lower rank
  bool whole_times_;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap_;
  std::vector<std::vector<int>> buckets_;
  size_t current_ = 0;
  size_t read_ = 0;
  size_t size_ = 0;
};

// Events are "forward of (s, m) done" and "input gradient of (s, m) done" (by B or I), stored flat so the
// run stays linear in the number of actions.
class Engine {
 public:
  Engine(const Schedule& schedule, const CostModel& costs)
      : schedule_(schedule), costs_(costs), stages_(schedule.num_stages()), microbatches_(schedule.microbatches),
        transfer_(transfer_time(costs)),
        event_end_(2 * static_cast<size_t>(stages_) * microbatches_, kNotDone),
        position_(schedule.ranks, 0), free_at_(schedule.ranks, 0.0), waiting_on_(schedule.ranks, kNotWaiting),
        ready_(is_whole(costs.forward) && is_whole(costs.backward_input) && is_whole(costs.backward_weight) &&
               is_whole(transfer_)) {}

  std::optional<Stall> run(const std::function<void(const StartedAction&)>& on_start) {
    for (int rank = 0; rank < schedule_.ranks; ++rank) ready_.push(0.0, rank);
    while (!ready_.empty()) {
      const auto [now, rank] = ready_.pop();
      step(rank, now, on_start);
    }
    for (int rank = 0; rank < schedule_.ranks; ++rank) {
      skip_communication(rank);
      const auto& list = schedule_.actions[rank];
      if (position_[rank] < list.size())
        return Stall{rank, position_[rank], list[position_[rank]], describe_event(waiting_on_[rank])};
    }
    return std::nullopt;
  }

 private:
  int64_t forward_event(int stage, int mb) const { return static_cast<int64_t>(stage) * microbatches_ + mb; }
  int64_t input_grad_event(int stage, int mb) const {
    return static_cast<int64_t>(stages_) * microbatches_ + forward_event(stage, mb);
  }
  int stage_of_event(int64_t event) const {
    return static_cast<int>((event % (static_cast<int64_t>(stages_) * microbatches_)) / microbatches_);
  }

  std::string describe_event(int64_t event) const {
    if (event == kNotWaiting) return "nothing";
    const bool forward = event < static_cast<int64_t>(stages_) * microbatches_;
    const int mb = static_cast<int>(event % microbatches_);
    return std::to_string(stage_of_event(event)) + (forward ? "F" : "B/I") + std::to_string(mb);
  }

  void skip_communication(int rank) {
    const auto& list = schedule_.actions[rank];
    while (position_[rank] < list.size() && is_communication(list[position_[rank]].kind)) ++position_[rank];
  }

  double cost_of(ActionKind kind) const {
    switch (kind) {
      case ActionKind::F: return costs_.forward;
      case ActionKind::B: return costs_.backward_input + costs_.backward_weight;
      case ActionKind::I: return costs_.backward_input;
      case ActionKind::W: return costs_.backward_weight;
      default: return 0.0;
    }
  }

  // Fills `deps` with the events `action` needs; returns how many.
  int dependencies(const Action& action, int64_t deps[2]) const {
    const int s = action.stage, m = action.microbatch;
    switch (action.kind) {
      case ActionKind::F:
        if (s == 0) return 0;
        deps[0] = forward_event(s - 1, m);
        return 1;
      case ActionKind::B:
      case ActionKind::I:
        deps[0] = forward_event(s, m);
        if (s == stages_ - 1) return 1;
        deps[1] = input_grad_event(s + 1, m);
        return 2;
      case ActionKind::W:
        deps[0] = input_grad_event(s, m);
        return 1;
      default: return 0;
    }
  }

  void step(int rank, double now, const std::function<void(const StartedAction&)>& on_start) {
    skip_communication(rank);
    const auto& list = schedule_.actions[rank];
    if (position_[rank] >= list.size()) return;
    const Action& action = list[position_[rank]];
    int64_t deps[2];
    const int count = dependencies(action, deps);
    double start = free_at_[rank];
    for (int i = 0; i < count; ++i) {
      const double done_at = event_end_[deps[i]];
      if (done_at == kNotDone) {
        waiting_on_[rank] = deps[i];  // woken when the event is produced
        return;
      }
      const bool remote = schedule_.rank_of(stage_of_event(deps[i])) != rank;
      start = std::max(start, done_at + (remote ? transfer_ : 0.0));
    }
    if (start > now) {  // data still in flight: come back when it lands so starts are reported in time order
      ready_.push(start, rank);
      return;
    }
    const double end = start + cost_of(action.kind);
    on_start({rank, position_[rank], action, start, end});
    ++position_[rank];
    free_at_[rank] = end;
    ready_.push(end, rank);
    publish(action, end, now);
  }

  void publish(const Action& action, double end, double now) {
    const int s = action.stage, m = action.microbatch;
    if (action.kind == ActionKind::F) {
      event_end_[forward_event(s, m)] = end;
      if (s + 1 < stages_) wake(schedule_.rank_of(s + 1), forward_event(s, m), now);
    } else if (action.kind == ActionKind::B || action.kind == ActionKind::I) {
      event_end_[input_grad_event(s, m)] = end;
      if (s > 0) wake(schedule_.rank_of(s - 1), input_grad_event(s, m), now);
    }
  }

  void wake(int rank, int64_t event, double now) {
    if (waiting_on_[rank] != event) return;
    waiting_on_[rank] = kNotWaiting;
    ready_.push(std::max(now, free_at_[rank]), rank);
  }

  const Schedule& schedule_;
  const CostModel& costs_;
  const int stages_;
  const int microbatches_;
  const double transfer_;
  std::vector<double> event_end_;
  std::vector<size_t> position_;
  std::vector<double> free_at_;
  std::vector<int64_t> waiting_on_;
  ReadyQueue ready_;
};

}  // namespace

std::optional<Stall> run_dependencies(const Schedule& schedule, const CostModel& costs,
                                      const std::function<void(const StartedAction&)>& on_start) {
  return Engine(schedule, costs).run(on_start);
}

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
