#include "core/schedule/validator_checks.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/common/error.h"

namespace sluice {
namespace schedule {
namespace detail {
namespace {

constexpr int32_t kAbsent = -1;
constexpr int kKinds = 8;

std::string pair_name(int stage, int mb) {
  return "stage " + std::to_string(stage) + " micro-batch " + std::to_string(mb);
}

// Where each (kind, stage, micro-batch) sits in its rank's list. Stages live on exactly one rank, so the
// position alone identifies the action once placement is checked. Slots hold position + 1, so that the
// all-zero memory calloc returns means "absent" without a pass that fills the table; `Slot` is uint16_t when
// every list is short enough (p = 512, m = 4096 lists are under 60,000 actions), halving the table, whose
// fresh pages cost more than the checks themselves. The kinds of one (stage, micro-batch) are adjacent: the
// checks of one action look up several kinds of the same pair, which then share a cache line.
template <typename Slot>
class PositionTable {
 public:
  PositionTable(int stages, int microbatches)
      : microbatches_(microbatches),
        slots_(static_cast<Slot*>(std::calloc(static_cast<size_t>(kKinds) * stages * microbatches, sizeof(Slot)))) {
    if (!slots_) throw Error(ErrorCode::kInternal, "validator: out of memory for the position table");
  }
  int32_t get(ActionKind kind, int stage, int mb) const {
    return static_cast<int32_t>(slots_.get()[index(kind, stage, mb)]) - 1;
  }
  void set(ActionKind kind, int stage, int mb, size_t position) {
    slots_.get()[index(kind, stage, mb)] = static_cast<Slot>(position + 1);
  }
  // Whether every position of a list of `length` actions fits in a Slot next to the "absent" value.
  static bool fits(size_t length) { return length < std::numeric_limits<Slot>::max(); }

 private:
  size_t index(ActionKind kind, int stage, int mb) const {
    return (static_cast<size_t>(stage) * microbatches_ + mb) * kKinds + static_cast<size_t>(kind);
  }
  struct Free {
    void operator()(Slot* slots) const { std::free(slots); }
  };
  int microbatches_;
  std::unique_ptr<Slot[], Free> slots_;
};

template <typename Slot>
class ActionChecker {
 public:
  explicit ActionChecker(const Schedule& schedule)
      : schedule_(schedule), stages_(schedule.num_stages()), lowered_(is_lowered(schedule)),
        table_(stages_, schedule.microbatches) {}

  // A valid schedule (the common case) passes in one fused pass over the lists; only when that pass sees a
  // problem does a fresh checker rerun the separate passes, which report the same first issue as always.
  std::optional<ValidationIssue> run() {
    if (passes_in_one_pass()) return std::nullopt;
    return ActionChecker(schedule_).run_in_separate_passes();
  }

  // The slow path.
  // Record-all, then order-check-all, then completeness: the issue reported is the first in that order.
  std::optional<ValidationIssue> run_in_separate_passes() {
    for (int rank = 0; rank < schedule_.ranks; ++rank)
      for (size_t i = 0; i < schedule_.actions[rank].size(); ++i)
        if (auto issue = record(rank, i)) return issue;
    for (int rank = 0; rank < schedule_.ranks; ++rank) {
      std::vector<int> last_weight_mb(stages_, -1);
      for (size_t i = 0; i < schedule_.actions[rank].size(); ++i)
        if (auto issue = check_order(rank, i, last_weight_mb)) return issue;
    }
    return check_complete();
  }

  // The fast path. True exactly when run_in_separate_passes() finds nothing, but reads every list once instead of twice and
  // skips the completeness scan over the whole table (at p = 512, m = 4096 each pass costs a tenth of a second):
  // - every same-rank prerequisite of action i sits before it, so it is already recorded when i is checked;
  // - a SEND/RECV looks for its counterpart only when that one's rank was recorded earlier; the later end of
  //   every pair does the looking, so all messages are paired exactly when matches are half the messages;
  // - with duplicates and B/I mixes excluded per action, and every W preceded by its I, counting F, B, I and W
  //   proves what the completeness scan checks pair by pair.
  bool passes_in_one_pass() {
    size_t kind_count[kKinds] = {};
    for (int rank = 0; rank < schedule_.ranks; ++rank) {
      std::vector<int> last_weight_mb(stages_, -1);
      const std::vector<Action>& list = schedule_.actions[rank];
      for (size_t i = 0; i < list.size(); ++i) {
        if (is_skip_message(list[i].kind)) continue;  // validator_skips.h checks them
        if (!acceptable(rank, i, list[i], last_weight_mb)) return false;
        ++kind_count[static_cast<int>(list[i].kind)];
      }
    }
    const size_t pairs = static_cast<size_t>(stages_) * schedule_.microbatches;
    const size_t messages = kind_count[static_cast<int>(ActionKind::SEND_F)] +
                            kind_count[static_cast<int>(ActionKind::RECV_F)] +
                            kind_count[static_cast<int>(ActionKind::SEND_B)] +
                            kind_count[static_cast<int>(ActionKind::RECV_B)];
    return messages == 2 * matched_messages_ && kind_count[static_cast<int>(ActionKind::F)] == pairs &&
           kind_count[static_cast<int>(ActionKind::B)] + kind_count[static_cast<int>(ActionKind::I)] == pairs &&
           kind_count[static_cast<int>(ActionKind::I)] == kind_count[static_cast<int>(ActionKind::W)];
  }

 private:

  ValidationIssue at(int rank, size_t position, const std::string& message) const {
    return {rank, static_cast<long>(position), to_string(schedule_.actions[rank][position]), message};
  }

  // Whether data crosses ranks between `stage` and its neighbour, i.e. whether a SEND/RECV is due.
  bool crosses(int stage, int neighbour) const {
    return neighbour >= 0 && neighbour < stages_ && schedule_.rank_of(stage) != schedule_.rank_of(neighbour);
  }

  std::optional<ValidationIssue> record(int rank, size_t i) {
    const Action& a = schedule_.actions[rank][i];
    if (is_skip_message(a.kind)) return std::nullopt;  // validator_skips.h checks them
    if (a.stage < 0 || a.stage >= stages_)
      return at(rank, i, "stage " + std::to_string(a.stage) + " out of range 0.." + std::to_string(stages_ - 1));
    if (a.microbatch < 0 || a.microbatch >= schedule_.microbatches)
      return at(rank, i, "micro-batch " + std::to_string(a.microbatch) + " out of range 0.." +
                             std::to_string(schedule_.microbatches - 1));
    if (schedule_.rank_of(a.stage) != rank)
      return at(rank, i, "stage " + std::to_string(a.stage) + " belongs to rank " +
                             std::to_string(schedule_.rank_of(a.stage)) + ", not rank " + std::to_string(rank));
    const int s = a.stage;
    if (!message_due(a))
      return at(rank, i, "no message is due here: the neighbouring stage is on the same rank or does not exist");
    const int32_t slot = table_.get(a.kind, s, a.microbatch);
    if (slot != kAbsent)
      return at(rank, i, std::string("duplicate: ") + kind_name(a.kind) + " of " + pair_name(s, a.microbatch) +
                             " already runs at action " + std::to_string(slot));
    if (auto issue = mix_issue(rank, i, a)) return issue;
    table_.set(a.kind, s, a.microbatch, i);
    return std::nullopt;
  }

  // False for a SEND/RECV between stages on one rank (or towards a stage that does not exist).
  bool message_due(const Action& a) const {
    const int s = a.stage;
    switch (a.kind) {
      case ActionKind::SEND_F:
      case ActionKind::RECV_B: return crosses(s, s + 1);
      case ActionKind::RECV_F:
      case ActionKind::SEND_B: return crosses(s, s - 1);
      default: return true;
    }
  }

  // A (stage, micro-batch) runs its backward either fused (B) or split (I + W), never both.
  std::optional<ValidationIssue> mix_issue(int rank, size_t i, const Action& a) {
    const int s = a.stage, m = a.microbatch;
    const bool split = a.kind == ActionKind::I || a.kind == ActionKind::W;
    if (split && table_.get(ActionKind::B, s, m) != kAbsent)
      return at(rank, i, "mixes split I/W with a fused B for " + pair_name(s, m));
    if (a.kind == ActionKind::B && split_recorded(s, m))
      return at(rank, i, "mixes a fused B with split I/W for " + pair_name(s, m));
    return std::nullopt;
  }

  // Position of the backward piece that produces the input gradient of (stage, mb): B or I.
  int32_t input_gradient(int stage, int mb) {
    const int32_t fused = table_.get(ActionKind::B, stage, mb);
    return fused != kAbsent ? fused : table_.get(ActionKind::I, stage, mb);
  }

  // `needed` must sit earlier on the same rank. `describe` names it; called only on failure because building
  // strings for every action would dominate validation time at p=512, m=4096.
  // The passing test stays small enough to inline; the issue is built out of line (it runs at most once).
  template <typename Describe>
  std::optional<ValidationIssue> require_before(int rank, size_t i, int32_t needed, Describe describe) {
    if (needed != kAbsent && static_cast<size_t>(needed) <= i) return std::nullopt;
    return order_issue(rank, i, needed, describe());
  }

  [[gnu::noinline]] ValidationIssue order_issue(int rank, size_t i, int32_t needed, const std::string& what) const {
    if (needed == kAbsent) return at(rank, i, "needs " + what + ", which rank " + std::to_string(rank) + " never runs");
    return at(rank, i, "runs before " + what + " (action " + std::to_string(needed) + "), which it needs");
  }

  std::optional<ValidationIssue> require_exists(int rank, size_t i, int32_t counterpart, const Action& wanted) {
    if (counterpart != kAbsent) return std::nullopt;
    return missing_counterpart(rank, i, wanted);
  }

  [[gnu::noinline]] ValidationIssue missing_counterpart(int rank, size_t i, const Action& wanted) const {
    return at(rank, i, "has no matching " + to_string(wanted) + " on rank " +
                           std::to_string(schedule_.rank_of(wanted.stage)));
  }

  std::optional<ValidationIssue> check_order(int rank, size_t i, std::vector<int>& last_weight_mb) {
    const Action& a = schedule_.actions[rank][i];
    if (is_skip_message(a.kind)) return std::nullopt;
    switch (a.kind) {
      case ActionKind::F: return forward_order_issue(rank, i, a);
      case ActionKind::B:
      case ActionKind::I: return input_gradient_order_issue(rank, i, a, last_weight_mb);
      case ActionKind::W:
        if (auto issue = require_action_before(rank, i, {a.stage, ActionKind::I, a.microbatch})) return issue;
        return check_accumulation(rank, i, last_weight_mb);
      default: return message_order_issue(rank, i, a);
    }
  }

  // `needed` (an action of this rank) must sit before position i.
  std::optional<ValidationIssue> require_action_before(int rank, size_t i, const Action& needed) {
    return require_before(rank, i, table_.get(needed.kind, needed.stage, needed.microbatch),
                          [needed] { return to_string(needed); });
  }

  // The backward piece (B or I) that produces the input gradient of (stage, mb) must sit before position i.
  std::optional<ValidationIssue> require_input_gradient_before(int rank, size_t i, int stage, int mb) {
    return require_before(rank, i, input_gradient(stage, mb),
                          [stage, mb] { return "the backward (B or I) of " + pair_name(stage, mb); });
  }

  std::optional<ValidationIssue> forward_order_issue(int rank, size_t i, const Action& a) {
    const int s = a.stage, m = a.microbatch;
    if (s == 0) return std::nullopt;
    if (!crosses(s, s - 1)) return require_action_before(rank, i, {s - 1, ActionKind::F, m});
    if (lowered_) return require_action_before(rank, i, {s, ActionKind::RECV_F, m});
    return std::nullopt;
  }

  std::optional<ValidationIssue> input_gradient_order_issue(int rank, size_t i, const Action& a,
                                                            std::vector<int>& last_weight_mb) {
    const int s = a.stage, m = a.microbatch;
    if (auto issue = require_action_before(rank, i, {s, ActionKind::F, m})) return issue;
    if (a.kind == ActionKind::B) {
      if (auto issue = check_accumulation(rank, i, last_weight_mb)) return issue;
    }
    if (s == stages_ - 1) return std::nullopt;
    if (!crosses(s, s + 1)) return require_input_gradient_before(rank, i, s + 1, m);
    if (lowered_) return require_action_before(rank, i, {s, ActionKind::RECV_B, m});
    return std::nullopt;
  }

  // A SEND follows the compute that produced its data; every message has its counterpart on the peer rank.
  std::optional<ValidationIssue> message_order_issue(int rank, size_t i, const Action& a) {
    const int s = a.stage, m = a.microbatch;
    switch (a.kind) {
      case ActionKind::SEND_F:
        if (auto issue = require_action_before(rank, i, {s, ActionKind::F, m})) return issue;
        return require_counterpart(rank, i, {s + 1, ActionKind::RECV_F, m});
      case ActionKind::SEND_B:
        if (auto issue = require_input_gradient_before(rank, i, s, m)) return issue;
        return require_counterpart(rank, i, {s - 1, ActionKind::RECV_B, m});
      case ActionKind::RECV_F: return require_counterpart(rank, i, {s - 1, ActionKind::SEND_F, m});
      case ActionKind::RECV_B: return require_counterpart(rank, i, {s + 1, ActionKind::SEND_B, m});
      default: return std::nullopt;
    }
  }

  std::optional<ValidationIssue> require_counterpart(int rank, size_t i, const Action& wanted) {
    return require_exists(rank, i, table_.get(wanted.kind, wanted.stage, wanted.microbatch), wanted);
  }

  // Weight gradients add up in micro-batch order, as in a sequential run, so results are bitwise equal.
  std::optional<ValidationIssue> check_accumulation(int rank, size_t i, std::vector<int>& last_weight_mb) {
    const Action& a = schedule_.actions[rank][i];
    int& last = last_weight_mb[a.stage];
    if (a.microbatch < last)
      return at(rank, i, "weight gradients of stage " + std::to_string(a.stage) +
                             " must accumulate in micro-batch order, but micro-batch " +
                             std::to_string(a.microbatch) + " comes after micro-batch " + std::to_string(last));
    last = a.microbatch;
    return std::nullopt;
  }

  std::optional<ValidationIssue> check_complete() {
    for (int s = 0; s < stages_; ++s) {
      const int rank = schedule_.rank_of(s);
      for (int m = 0; m < schedule_.microbatches; ++m) {
        auto missing = [&](const std::string& what) {
          return ValidationIssue{rank, -1, "", pair_name(s, m) + ": " + what};
        };
        if (table_.get(ActionKind::F, s, m) == kAbsent) return missing("F never runs");
        const bool fused = table_.get(ActionKind::B, s, m) != kAbsent;
        const bool input = table_.get(ActionKind::I, s, m) != kAbsent;
        const bool weight = table_.get(ActionKind::W, s, m) != kAbsent;
        if (!fused && !input && !weight) return missing("no backward (neither B nor I+W) runs");
        if (input && !weight) return missing("I runs but W never does");
        if (weight && !input) return missing("W runs but I never does");
      }
    }
    return std::nullopt;
  }

  // record() and check_order() as one yes/no test, recording `a` at `i`: no strings, no optional issue to
  // build and test per action. Must reject exactly what they reject (given the fused pass's pairing rule);
  // tests/schedule/validator_paths_agree_test.cc compares the two on many broken schedules.
  bool acceptable(int rank, size_t i, const Action& a, std::vector<int>& last_weight_mb) {
    const int s = a.stage, m = a.microbatch;
    if (!in_range_on(rank, s, m) || table_.get(a.kind, s, m) != kAbsent) return false;
    bool ok = false;
    switch (a.kind) {
      case ActionKind::F: ok = forward_acceptable(i, s, m); break;
      case ActionKind::B:
      case ActionKind::I: ok = input_gradient_acceptable(i, a, last_weight_mb); break;
      case ActionKind::W: ok = weight_gradient_acceptable(i, s, m, last_weight_mb); break;
      case ActionKind::SEND_F:
      case ActionKind::SEND_B:
      case ActionKind::RECV_F:
      case ActionKind::RECV_B: ok = message_acceptable(rank, i, a); break;
      default: return false;  // skip messages never get here (passes_in_one_pass leaves them out)
    }
    table_.set(a.kind, s, m, i);
    return ok;
  }

  // The fast path's forms of check_order()'s rules, one per kind; record()'s rules sit with them where they
  // concern one kind.
  bool in_range_on(int rank, int s, int m) const {
    return s >= 0 && s < stages_ && m >= 0 && m < schedule_.microbatches && schedule_.rank_of(s) == rank;
  }

  bool before(size_t i, int32_t needed) const { return needed != kAbsent && static_cast<size_t>(needed) <= i; }

  bool forward_acceptable(size_t i, int s, int m) const {
    if (s == 0) return true;
    if (!crosses(s, s - 1)) return before(i, table_.get(ActionKind::F, s - 1, m));
    return !lowered_ || before(i, table_.get(ActionKind::RECV_F, s, m));
  }

  bool input_gradient_acceptable(size_t i, const Action& a, std::vector<int>& last_weight_mb) {
    const int s = a.stage, m = a.microbatch;
    const bool fused = a.kind == ActionKind::B;
    if (fused ? split_recorded(s, m) : table_.get(ActionKind::B, s, m) != kAbsent) return false;
    if (!before(i, table_.get(ActionKind::F, s, m))) return false;
    if (fused && !in_weight_order(s, m, last_weight_mb)) return false;
    if (s == stages_ - 1) return true;
    if (!crosses(s, s + 1)) return before(i, input_gradient(s + 1, m));
    return !lowered_ || before(i, table_.get(ActionKind::RECV_B, s, m));
  }

  bool weight_gradient_acceptable(size_t i, int s, int m, std::vector<int>& last_weight_mb) {
    if (table_.get(ActionKind::B, s, m) != kAbsent) return false;
    return before(i, table_.get(ActionKind::I, s, m)) && in_weight_order(s, m, last_weight_mb);
  }

  bool message_acceptable(int rank, size_t i, const Action& a) {
    const int s = a.stage, m = a.microbatch;
    switch (a.kind) {
      case ActionKind::SEND_F:
        return crosses(s, s + 1) && before(i, table_.get(ActionKind::F, s, m)) &&
               paired(rank, ActionKind::RECV_F, s + 1, m);
      case ActionKind::SEND_B:
        return crosses(s, s - 1) && before(i, input_gradient(s, m)) && paired(rank, ActionKind::RECV_B, s - 1, m);
      case ActionKind::RECV_F: return crosses(s, s - 1) && paired(rank, ActionKind::SEND_F, s - 1, m);
      case ActionKind::RECV_B: return crosses(s, s + 1) && paired(rank, ActionKind::SEND_B, s + 1, m);
      default: return false;
    }
  }

  bool split_recorded(int s, int m) const {
    return table_.get(ActionKind::I, s, m) != kAbsent || table_.get(ActionKind::W, s, m) != kAbsent;
  }

  // check_accumulation()'s rule.
  bool in_weight_order(int s, int m, std::vector<int>& last_weight_mb) const {
    int& last = last_weight_mb[s];
    if (m < last) return false;
    last = m;
    return true;
  }

  // The counterpart is looked up only if its rank is already recorded; the later end of each pair counts it.
  bool paired(int rank, ActionKind kind, int stage, int m) {
    if (schedule_.rank_of(stage) > rank) return true;
    ++matched_messages_;
    return table_.get(kind, stage, m) != kAbsent;
  }

  const Schedule& schedule_;
  const int stages_;
  const bool lowered_;
  PositionTable<Slot> table_;
  size_t matched_messages_ = 0;  // the fused pass's count of messages whose counterpart it found
};

}  // namespace

std::optional<ValidationIssue> check_header(const Schedule& schedule) {
  auto issue = [](const std::string& message) { return ValidationIssue{-1, -1, "", message}; };
  if (schedule.ranks <= 0) return issue("ranks must be positive, got " + std::to_string(schedule.ranks));
  if (schedule.chunks <= 0) return issue("chunks must be positive, got " + std::to_string(schedule.chunks));
  if (schedule.microbatches <= 0)
    return issue("microbatches must be positive, got " + std::to_string(schedule.microbatches));
  if (static_cast<int>(schedule.actions.size()) != schedule.ranks)
    return issue("has action lists for " + std::to_string(schedule.actions.size()) + " ranks, expected " +
                 std::to_string(schedule.ranks));
  if (static_cast<int>(schedule.stage_to_rank.size()) != schedule.num_stages())
    return issue("stage_to_rank has " + std::to_string(schedule.stage_to_rank.size()) + " entries, expected ranks * chunks = " +
                 std::to_string(schedule.num_stages()));
  std::vector<int> stages_per_rank(schedule.ranks, 0);
  for (int s = 0; s < schedule.num_stages(); ++s) {
    const int rank = schedule.stage_to_rank[s];
    if (rank < 0 || rank >= schedule.ranks)
      return issue("stage " + std::to_string(s) + " is placed on rank " + std::to_string(rank) + ", outside 0.." +
                   std::to_string(schedule.ranks - 1));
    ++stages_per_rank[rank];
  }
  for (int rank = 0; rank < schedule.ranks; ++rank)
    if (stages_per_rank[rank] != schedule.chunks)
      return issue("rank " + std::to_string(rank) + " holds " + std::to_string(stages_per_rank[rank]) +
                   " stages, expected chunks = " + std::to_string(schedule.chunks));
  return std::nullopt;
}

namespace {

// Runs `use` on a checker whose position table is as narrow as the longest list allows.
template <typename Use>
auto with_checker(const Schedule& schedule, Use use) {
  size_t longest = 0;
  for (const auto& list : schedule.actions) longest = std::max(longest, list.size());
  if (PositionTable<uint16_t>::fits(longest)) {
    ActionChecker<uint16_t> checker(schedule);
    return use(checker);
  }
  ActionChecker<uint32_t> checker(schedule);
  return use(checker);
}

}  // namespace

std::optional<ValidationIssue> check_actions(const Schedule& schedule) {
  return with_checker(schedule, [](auto& checker) { return checker.run(); });
}

bool actions_pass_fast_path(const Schedule& schedule) {
  return with_checker(schedule, [](auto& checker) { return checker.passes_in_one_pass(); });
}

std::optional<ValidationIssue> check_actions_slow_path(const Schedule& schedule) {
  return with_checker(schedule, [](auto& checker) { return checker.run_in_separate_passes(); });
}

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
