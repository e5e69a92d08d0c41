#include "core/schedule/dependency_engine.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/common/error.h"
#include "core/schedule/kind_traits.h"
#include "core/schedule/ready_queue.h"

namespace sluice {
namespace schedule {
namespace detail {
namespace {

constexpr double kNotDone = -1.0;
constexpr int64_t kNotWaiting = -1;

static_assert(static_cast<int>(ActionKind::F) == 0 && static_cast<int>(ActionKind::B) == 1 &&
                  static_cast<int>(ActionKind::I) == 2 && static_cast<int>(ActionKind::W) == 3,
              "the cost table is indexed by the compute kinds");

// An event an action waits for, with the stage that produces it (kept so that no division is needed to find
// out whether the data crosses ranks).
struct Need {
  int64_t event;
  int stage;
};

// When each event was produced (kNotDone: not yet). On a time step (ready_queue.h) with no time of the run beyond
// 2^31 steps, as a whole number of steps in 32 bits: exact, and half the memory of doubles, which matters because
// the one load of an event's end time is the run's main cache miss (at p = 512 the table is tens of MB).
class EventTimes {
 public:
  // `bound`: no time of the run exceeds it.
  EventTimes(size_t size, double step, double bound)
      : compact_(step > 0.0 && bound / step < static_cast<double>(INT32_MAX)), per_step_(compact_ ? 1.0 / step : 0.0),
        step_(step) {
    if (compact_)
      steps_.assign(size, -1);
    else
      times_.assign(size, kNotDone);
  }

  double operator[](int64_t event) const {
    if (!compact_) return times_[event];
    const int32_t steps = steps_[event];
    return steps < 0 ? kNotDone : steps * step_;
  }
  void set(int64_t event, double time) {
    if (compact_)
      steps_[event] = static_cast<int32_t>(time * per_step_);
    else
      times_[event] = time;
  }

 private:
  const bool compact_;
  const double per_step_;
  const double step_;
  std::vector<int32_t> steps_;
  std::vector<double> times_;
};

// A time no action of `schedule` can end after: every action waiting for the one before it, and every input
// arriving from another rank.
double time_bound(const Schedule& schedule, double longest_action, double transfer) {
  size_t actions = 0;
  for (const auto& list : schedule.actions) actions += list.size();
  return static_cast<double>(actions) * (longest_action + transfer);
}

}  // namespace

// Events are "forward of (s, m) done" and "input gradient of (s, m) done" (by B or I), stored flat so the
// run stays linear in the number of actions.
class DependencyRun::Engine {
 public:
  Engine(const Schedule& schedule, const CostModel& costs)
      : schedule_(schedule), stages_(schedule.num_stages()), microbatches_(schedule.microbatches),
        transfer_(transfer_time(costs)),
        cost_{costs.forward, costs.backward_input + costs.backward_weight, costs.backward_input,
              costs.backward_weight},
        stage_cost_(per_stage_table(costs, stages_)),
        // Measured per-stage costs fall on no common step: they take the heap.
        step_(stage_cost_.empty() ? time_step({costs.forward, costs.backward_input, costs.backward_weight, transfer_})
                                  : 0.0),
        event_end_(table_size(stages_, microbatches_), step_, time_bound(schedule, longest_action(), transfer_)),
        position_(schedule.ranks, 0),
        free_at_(schedule.ranks, 0.0), waiting_on_(schedule.ranks, kNotWaiting),
        ready_(step_, longest_action() + transfer_, step_ == 1.0 ? Ties::kPushOrder : Ties::kLowestFirst) {
    for (int rank = 0; rank < schedule_.ranks; ++rank) ready_.push(0.0, rank);
  }

  bool next(StartedAction& started) {
    while (!ready_.empty()) {
      const auto [now, rank] = ready_.pop();
      if (try_start(rank, now, started)) return true;
    }
    return false;
  }

  std::optional<Stall> stall() const {
    for (int rank = 0; rank < schedule_.ranks; ++rank) {
      const auto& list = schedule_.actions[rank];
      size_t position = position_[rank];
      while (position < list.size() && is_communication(list[position].kind)) ++position;
      if (position < list.size())
        return Stall{rank, position, list[position], describe_event(waiting_on_[rank])};
    }
    return std::nullopt;
  }

 private:
  double longest_action() const {
    const double uniform = *std::max_element(std::begin(cost_), std::end(cost_));
    return stage_cost_.empty() ? uniform : *std::max_element(stage_cost_.begin(), stage_cost_.end());
  }

  // What `action` costs: its stage's own entry when the costs are per stage.
  double cost_of(const Action& action) const {
    const int kind = static_cast<int>(action.kind);
    return stage_cost_.empty() ? cost_[kind] : stage_cost_[static_cast<size_t>(action.stage) * 4 + kind];
  }

  // CostModel::per_stage as a flat table of 4 costs (F, B, I, W) per stage; empty when the costs are uniform.
  static std::vector<double> per_stage_table(const CostModel& costs, int stages) {
    if (costs.per_stage.empty()) return {};
    if (static_cast<int>(costs.per_stage.size()) != stages) {
      throw Error(ErrorCode::kInvalidArgument, "cost model: per_stage has " + std::to_string(costs.per_stage.size()) +
                                                   " entries but the schedule has " + std::to_string(stages) +
                                                   " stages");
    }
    std::vector<double> table;
    for (int stage = 0; stage < stages; ++stage) {
      for (ActionKind kind : {ActionKind::F, ActionKind::B, ActionKind::I, ActionKind::W}) {
        table.push_back(compute_cost(costs, kind, stage));
      }
    }
    return table;
  }

  // Event times are stored in blocks of 8 micro-batches (one cache line of doubles) per (kind, stage), with all
  // stages of one micro-batch block side by side. A micro-batch travels through neighbouring stages at about the
  // same time, so the events the ranks touch together share a few pages; one row per stage instead spreads them
  // over thousands of pages, and at p = 512 the page-table misses dominated the whole run.
  static constexpr int kBlockShift = 3;
  static constexpr int64_t kBlock = int64_t{1} << kBlockShift;
  int64_t event(int kind_row, int stage, int mb) const {
    const int64_t line = (static_cast<int64_t>(mb >> kBlockShift) * 2 + kind_row) * stages_ + stage;
    return line * kBlock + (mb & (kBlock - 1));
  }
  int64_t forward_event(int stage, int mb) const { return event(0, stage, mb); }
  int64_t input_grad_event(int stage, int mb) const { return event(1, stage, mb); }
  static size_t table_size(int stages, int microbatches) {
    const int64_t blocks = (microbatches + kBlock - 1) / kBlock;
    return static_cast<size_t>(blocks * 2 * stages * kBlock);
  }

  std::string describe_event(int64_t event) const {
    if (event == kNotWaiting) return "nothing";
    const int64_t line = event / kBlock;
    const int stage = static_cast<int>(line % stages_);
    const bool forward = (line / stages_) % 2 == 0;
    const int mb = static_cast<int>((line / stages_ / 2) * kBlock + event % kBlock);
    return std::to_string(stage) + (forward ? "F" : "B/I") + std::to_string(mb);
  }

  // Fills `needs` with the events `action` waits for; returns how many.
  int dependencies(const Action& action, Need needs[2]) const {
    ActionInput inputs[2] = {};
    const int count = action_inputs(action, stages_, inputs);
    for (int i = 0; i < count; ++i) {
      const int stage = inputs[i].stage;
      needs[i] = {inputs[i].forward ? forward_event(stage, action.microbatch) : input_grad_event(stage, action.microbatch),
                  stage};
    }
    return count;
  }

  // Starts the rank's next compute action if its inputs are there at `now`; otherwise queues the rank again
  // for when they land (or leaves it waiting for an event not yet produced).
  bool try_start(int rank, double now, StartedAction& started) {
    const auto& list = schedule_.actions[rank];
    size_t& position = position_[rank];
    while (position < list.size() && is_communication(list[position].kind)) ++position;
    if (position >= list.size()) return false;
    const Action& action = list[position];
    Need needs[2];
    const int count = dependencies(action, needs);
    double start = free_at_[rank];
    for (int i = 0; i < count; ++i) {
      const double done_at = event_end_[needs[i].event];
      if (done_at == kNotDone) {
        waiting_on_[rank] = needs[i].event;  // woken when the event is produced
        return false;
      }
      const bool remote = schedule_.stage_to_rank[needs[i].stage] != rank;
      start = std::max(start, done_at + (remote ? transfer_ : 0.0));
    }
    if (start > now) {  // data still in flight: come back when it lands so starts come out in time order
      ready_.push(start, rank);
      return false;
    }
    const double end = start + cost_of(action);
    started = {rank, position, action, start, end};
    prefetch_ahead(list, position);
    ++position;
    free_at_[rank] = end;
    ready_.push(end, rank);
    publish(action, end, now);
    return true;
  }

  // The run hops between hundreds of ranks' lists (and stages' event rows), far more streams than the
  // hardware prefetcher follows, so every first touch of a line would otherwise be a full memory latency.
  // The rank comes back to its list after one round over the ranks; by then these lines are in cache.
  void prefetch_ahead(const std::vector<Action>& list, size_t position) const {
    constexpr size_t kActionsAhead = 32;
    if (position + kActionsAhead < list.size()) __builtin_prefetch(&list[position + kActionsAhead]);
  }

  void publish(const Action& action, double end, double now) {
    const int s = action.stage, m = action.microbatch;
    if (action.kind == ActionKind::F) {
      event_end_.set(forward_event(s, m), end);
      if (s + 1 < stages_) wake(schedule_.stage_to_rank[s + 1], forward_event(s, m), now);
    } else if (produces_input_gradient(action.kind)) {
      event_end_.set(input_grad_event(s, m), end);
      if (s > 0) wake(schedule_.stage_to_rank[s - 1], input_grad_event(s, m), now);
    }
  }

  void wake(int rank, int64_t event, double now) {
    if (waiting_on_[rank] != event) return;
    waiting_on_[rank] = kNotWaiting;
    ready_.push(std::max(now, free_at_[rank]), rank);
  }

  const Schedule& schedule_;
  const int stages_;
  const int microbatches_;
  const double transfer_;
  const double cost_[4];  // indexed by the compute kinds F, B, I, W (action.h's enum order)
  const std::vector<double> stage_cost_;  // 4 per stage when CostModel::per_stage is set, else empty
  const double step_;  // ready_queue.h's time_step() of the costs
  EventTimes event_end_;
  std::vector<size_t> position_;
  std::vector<double> free_at_;
  std::vector<int64_t> waiting_on_;
  ReadyQueue ready_;
};

DependencyRun::DependencyRun(const Schedule& schedule, const CostModel& costs)
    : engine_(std::make_unique<Engine>(schedule, costs)) {}
DependencyRun::~DependencyRun() = default;

bool DependencyRun::next(StartedAction& started) { return engine_->next(started); }
std::optional<Stall> DependencyRun::stall() const { return engine_->stall(); }

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
