#include "core/schedule/validator_skips.h"

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/schedule/rendezvous_dry_run.h"

namespace sluice {
namespace schedule {
namespace detail {
namespace {

using Key = std::tuple<ActionKind, int, int, int>;  // kind, stage, micro-batch, peer
Key key_of(const Action& a) { return {a.kind, a.stage, a.microbatch, a.peer}; }

std::optional<ValidationIssue> check_edges(const Schedule& schedule) {
  std::set<std::pair<int, int>> seen;
  for (const SkipEdge& skip : schedule.skips) {
    const std::string name = "skip " + to_string(skip);
    if (skip.from < 0 || skip.from >= skip.to || skip.to >= schedule.num_stages())
      return ValidationIssue{-1, -1, "", name + " must go from an earlier stage to a later one, both in 0.." +
                                             std::to_string(schedule.num_stages() - 1)};
    if (!seen.insert({skip.from, skip.to}).second) return ValidationIssue{-1, -1, "", name + " is listed twice"};
  }
  return std::nullopt;
}

class SkipChecker {
 public:
  explicit SkipChecker(const Schedule& schedule) : schedule_(schedule) {
    for (const SkipEdge& skip : schedule.skips) edges_.insert({skip.from, skip.to});
  }

  std::optional<ValidationIssue> run() {
    for (int rank = 0; rank < schedule_.ranks; ++rank)
      for (size_t i = 0; i < schedule_.actions[rank].size(); ++i)
        if (auto issue = record(rank, i)) return issue;
    for (const auto& [key, where] : skip_positions_)
      if (auto issue = check_one(where.first, where.second)) return issue;
    return check_complete();
  }

 private:
  ValidationIssue at(int rank, size_t i, const std::string& message) const {
    return {rank, static_cast<long>(i), to_string(schedule_.actions[rank][i]), message};
  }

  bool in_range(int stage) const { return stage >= 0 && stage < schedule_.num_stages(); }

  // The producer and reader stages a skip message names.
  static std::pair<int, int> edge_of(const Action& a) {
    const bool at_producer = a.kind == ActionKind::SEND_SKIP || a.kind == ActionKind::RECV_SKIP_GRAD;
    return at_producer ? std::make_pair(a.stage, a.peer) : std::make_pair(a.peer, a.stage);
  }

  std::optional<ValidationIssue> record(int rank, size_t i) {
    const Action& a = schedule_.actions[rank][i];
    if (is_compute(a.kind)) {
      compute_positions_[{a.kind, a.stage, a.microbatch, -1}] = static_cast<long>(i);
      return std::nullopt;
    }
    if (!is_skip_message(a.kind)) return std::nullopt;
    if (!in_range(a.stage) || !in_range(a.peer))
      return at(rank, i, "stage or peer stage out of range 0.." + std::to_string(schedule_.num_stages() - 1));
    if (a.microbatch < 0 || a.microbatch >= schedule_.microbatches)
      return at(rank, i, "micro-batch " + std::to_string(a.microbatch) + " out of range 0.." +
                             std::to_string(schedule_.microbatches - 1));
    if (schedule_.rank_of(a.stage) != rank)
      return at(rank, i, "stage " + std::to_string(a.stage) + " belongs to rank " +
                             std::to_string(schedule_.rank_of(a.stage)) + ", not rank " + std::to_string(rank));
    const auto edge = edge_of(a);
    if (!edges_.count(edge))
      return at(rank, i, "no skip " + std::to_string(edge.first) + ">" + std::to_string(edge.second) +
                             " is declared (the schedule's 'skips' line)");
    if (schedule_.rank_of(edge.first) == schedule_.rank_of(edge.second))
      return at(rank, i, "no message is due here: both stages of the skip sit on rank " + std::to_string(rank));
    if (!skip_positions_.emplace(key_of(a), std::make_pair(rank, i)).second)
      return at(rank, i, "duplicate: this skip message already runs at action " +
                             std::to_string(skip_positions_[key_of(a)].second));
    return std::nullopt;
  }

  long position(ActionKind kind, int stage, int mb) const {
    const auto found = compute_positions_.find({kind, stage, mb, -1});
    return found == compute_positions_.end() ? -1 : found->second;
  }
  long backward_position(int stage, int mb) const {
    const long fused = position(ActionKind::B, stage, mb);
    return fused >= 0 ? fused : position(ActionKind::I, stage, mb);
  }

  std::optional<ValidationIssue> check_one(int rank, size_t i) const {
    const Action& a = schedule_.actions[rank][i];
    const int s = a.stage, m = a.microbatch;
    const std::string pair = "stage " + std::to_string(s) + " micro-batch " + std::to_string(m);
    const long here = static_cast<long>(i);
    switch (a.kind) {
      case ActionKind::SEND_SKIP:
        if (position(ActionKind::F, s, m) < 0 || position(ActionKind::F, s, m) > here)
          return at(rank, i, "runs before the F of " + pair + ", which makes the skip tensors it sends");
        break;
      case ActionKind::RECV_SKIP:
        if (position(ActionKind::F, s, m) >= 0 && position(ActionKind::F, s, m) < here)
          return at(rank, i, "runs after the F of " + pair + ", which reads the skip tensors it receives");
        break;
      case ActionKind::SEND_SKIP_GRAD:
        if (backward_position(s, m) < 0 || backward_position(s, m) > here)
          return at(rank, i, "runs before the backward (B or I) of " + pair + ", which makes the gradient it sends");
        break;
      default:  // RECV_SKIP_GRAD
        if (backward_position(s, m) >= 0 && backward_position(s, m) < here)
          return at(rank, i, "runs after the backward (B or I) of " + pair + ", which needs the gradient it receives");
        break;
    }
    const Action partner = counterpart(a);
    if (!skip_positions_.count(key_of(partner)))
      return at(rank, i, "has no matching " + to_string(partner) + " on rank " +
                             std::to_string(schedule_.rank_of(partner.stage)));
    return std::nullopt;
  }

  // In a lowered schedule each crossing skip's messages are all there (a missing pair has no end to report it).
  std::optional<ValidationIssue> check_complete() const {
    if (!is_lowered(schedule_)) return std::nullopt;
    for (const SkipEdge& skip : schedule_.skips) {
      if (!crosses_ranks(schedule_, skip)) continue;
      for (int m = 0; m < schedule_.microbatches; ++m) {
        const Action forward{skip.to, ActionKind::RECV_SKIP, m, skip.from};
        if (!skip_positions_.count(key_of(forward)))
          return missing(skip.to, "the skip " + to_string(skip) + " of micro-batch " + std::to_string(m) +
                                      " never arrives (no " + to_string(forward) + ")");
        const Action backward{skip.from, ActionKind::RECV_SKIP_GRAD, m, skip.to};
        if (backward_position(skip.to, m) >= 0 && !skip_positions_.count(key_of(backward)))
          return missing(skip.from, "the gradient of skip " + to_string(skip) + " of micro-batch " +
                                        std::to_string(m) + " never arrives (no " + to_string(backward) + ")");
      }
    }
    return std::nullopt;
  }

  ValidationIssue missing(int stage, const std::string& message) const {
    return {schedule_.rank_of(stage), -1, "", message};
  }

  const Schedule& schedule_;
  std::set<std::pair<int, int>> edges_;
  std::map<Key, long> compute_positions_;  // only compute actions, keyed with peer -1
  std::map<Key, std::pair<int, size_t>> skip_positions_;
};

}  // namespace

std::optional<ValidationIssue> check_skips(const Schedule& schedule) {
  if (auto issue = check_edges(schedule)) return issue;
  bool any_message = false;
  for (const auto& list : schedule.actions)
    for (const Action& a : list) any_message = any_message || is_skip_message(a.kind);
  if (schedule.skips.empty() && !any_message) return std::nullopt;
  return SkipChecker(schedule).run();
}

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
