// The validator decides a schedule's actions in one of two ways (core/schedule/validator_checks.cc): a fused
// single pass that only says yes or no (the fast path, trusted when it says yes) and separate passes that name
// the first issue (the slow path). They encode the same rules twice, so here they meet many broken schedules:
// valid generated schedules of every kind, compute-only and lowered, with random mutations (drop, duplicate,
// swap, move to another rank, retarget stage / micro-batch / kind, broken SEND/RECV pairs, I/W reordered).
// Every verdict must agree; enough mutants must land on each side for the comparison to mean something.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/schedule/generators.h"
#include "core/schedule/lowering.h"
#include "core/schedule/validator_checks.h"

namespace sluice {
namespace schedule {
namespace {

constexpr ActionKind kKinds[] = {ActionKind::F,      ActionKind::B,      ActionKind::I,      ActionKind::W,
                                 ActionKind::SEND_F, ActionKind::RECV_F, ActionKind::SEND_B, ActionKind::RECV_B};

// Valid starting points: every generator on small shapes, compute-only and lowered.
std::vector<Schedule> valid_schedules() {
  std::vector<Schedule> out;
  for (const std::string& name : schedule_names()) {
    for (int ranks = 1; ranks <= 4; ++ranks) {
      for (int microbatches = 1; microbatches <= 8; ++microbatches) {
        for (int chunks = 1; chunks <= 2; ++chunks) {
          Schedule compute;
          try {
            compute = make_schedule(name, ranks, microbatches, chunks);
          } catch (const std::exception&) {
            continue;  // a shape this generator does not support
          }
          out.push_back(lower(compute));
          out.push_back(std::move(compute));
        }
      }
    }
  }
  return out;
}

class Mutator {
 public:
  explicit Mutator(unsigned seed) : random_(seed) {}

  // One to three random mutations.
  void mutate(Schedule& s) {
    const int count = pick(1, 3);
    for (int k = 0; k < count; ++k) mutate_once(s);
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(random_); }
  size_t pick_index(size_t size) { return static_cast<size_t>(pick(0, static_cast<int>(size) - 1)); }

  // A rank with at least one action, or -1.
  int busy_rank(const Schedule& s) {
    std::vector<int> busy;
    for (int r = 0; r < s.ranks; ++r)
      if (!s.actions[r].empty()) busy.push_back(r);
    return busy.empty() ? -1 : busy[pick_index(busy.size())];
  }

  void mutate_once(Schedule& s) {
    const int rank = busy_rank(s);
    if (rank < 0) return;
    std::vector<Action>& list = s.actions[rank];
    const size_t i = pick_index(list.size());
    switch (pick(0, 9)) {
      case 0: list.erase(list.begin() + i); break;                                   // drop
      case 1: list.insert(list.begin() + pick_index(list.size() + 1), list[i]); break;  // duplicate
      case 2: std::swap(list[i], list[pick_index(list.size())]); break;             // swap anywhere
      case 3:                                                                       // swap neighbours
        if (i + 1 < list.size()) std::swap(list[i], list[i + 1]);
        break;
      case 4: move_to_other_rank(s, rank, i); break;
      case 5: list[i].stage += pick(0, 1) ? 1 : -1; break;  // may leave the range or the rank
      case 6: list[i].microbatch = pick(-1, s.microbatches); break;  // may leave the range
      case 7: list[i].kind = kKinds[pick(0, 7)]; break;
      case 8: break_message(list); break;
      default: reorder_split_backward(list); break;
    }
  }

  void move_to_other_rank(Schedule& s, int rank, size_t i) {
    const int to = pick(0, s.ranks - 1);
    const Action a = s.actions[rank][i];
    s.actions[rank].erase(s.actions[rank].begin() + i);
    std::vector<Action>& target = s.actions[to];
    target.insert(target.begin() + pick_index(target.size() + 1), a);
  }

  // A SEND or RECV loses its partner: dropped, pointed at another micro-batch, or turned the other way.
  void break_message(std::vector<Action>& list) {
    std::vector<size_t> messages;
    for (size_t j = 0; j < list.size(); ++j)
      if (is_communication(list[j].kind)) messages.push_back(j);
    if (messages.empty()) return;
    Action& a = list[messages[pick_index(messages.size())]];
    switch (pick(0, 2)) {
      case 0: list.erase(list.begin() + (&a - list.data())); break;
      case 1: a.microbatch += pick(0, 1) ? 1 : -1; break;
      default: {
        static const ActionKind flipped[] = {ActionKind::F,      ActionKind::B,      ActionKind::I,
                                             ActionKind::W,      ActionKind::RECV_F, ActionKind::SEND_F,
                                             ActionKind::RECV_B, ActionKind::SEND_B};
        a.kind = flipped[static_cast<int>(a.kind)];  // SEND <-> RECV of the same direction
      }
    }
  }

  // W before its I, or the weight gradients of one stage out of micro-batch order.
  void reorder_split_backward(std::vector<Action>& list) {
    std::vector<size_t> weights;
    for (size_t j = 0; j < list.size(); ++j)
      if (list[j].kind == ActionKind::W || list[j].kind == ActionKind::B) weights.push_back(j);
    if (weights.empty()) return;
    const size_t w = weights[pick_index(weights.size())];
    if (pick(0, 1) == 0 && list[w].kind == ActionKind::W) {
      for (size_t j = 0; j < w; ++j) {
        if (list[j].kind == ActionKind::I && list[j].stage == list[w].stage && list[j].microbatch == list[w].microbatch) {
          std::swap(list[j], list[w]);
          return;
        }
      }
    }
    std::swap(list[w], list[weights[pick_index(weights.size())]]);
  }

  std::mt19937 random_;
};

std::string text(const Schedule& s) {
  std::string out = s.name + " P=" + std::to_string(s.ranks) + " V=" + std::to_string(s.chunks) +
                    " M=" + std::to_string(s.microbatches) + "\n";
  for (int r = 0; r < s.ranks; ++r) {
    out += "  rank " + std::to_string(r) + ":";
    for (const Action& a : s.actions[r]) out += " " + to_string(a);
    out += "\n";
  }
  return out;
}

// The two paths' verdicts on `s`; false (after a test failure) when they disagree.
bool paths_agree(const Schedule& s, bool& accepted) {
  const bool fast = detail::actions_pass_fast_path(s);
  const auto slow = detail::check_actions_slow_path(s);
  accepted = fast;
  if (fast == !slow.has_value()) return true;
  ADD_FAILURE() << "fast path says " << (fast ? "valid" : "invalid") << ", slow path says "
                << (slow ? "invalid: " + slow->describe() : std::string("valid")) << "\n" << text(s);
  return false;
}

TEST(ValidatorPathsAgree, OnEveryValidGeneratedSchedule) {
  for (const Schedule& s : valid_schedules()) {
    ASSERT_FALSE(detail::check_header(s)) << text(s);
    bool accepted = false;
    ASSERT_TRUE(paths_agree(s, accepted));
    EXPECT_TRUE(accepted) << text(s);
  }
}

TEST(ValidatorPathsAgree, OnRandomlyBrokenSchedules) {
  const std::vector<Schedule> bases = valid_schedules();
  Mutator mutator(20240611);
  constexpr int kCases = 40000;
  int accepted_mutants = 0, rejected = 0, disagreements = 0;
  for (int c = 0; c < kCases && disagreements < 5; ++c) {
    Schedule s = bases[static_cast<size_t>(c) % bases.size()];
    const std::vector<std::vector<Action>> original = s.actions;
    mutator.mutate(s);
    bool accepted = false;
    if (!paths_agree(s, accepted)) ++disagreements;
    if (!accepted) ++rejected;
    else if (s.actions != original) ++accepted_mutants;
  }
  // Both verdicts must be common for the agreement to be evidence: most mutations break the schedule, and
  // some (neighbours swapped that do not depend on each other, say) leave it valid.
  std::printf("%d mutants: %d rejected, %d changed but still valid\n", kCases, rejected, accepted_mutants);
  EXPECT_GT(rejected, kCases / 2);
  EXPECT_GT(accepted_mutants, kCases / 100);
}

}  // namespace
}  // namespace schedule
}  // namespace sluice
