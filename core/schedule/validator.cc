#include "core/schedule/validator.h"

#include <cstdint>
#include <vector>

#include "core/common/error.h"
#include "core/schedule/dependency_engine.h"
#include "core/schedule/rendezvous_dry_run.h"
#include "core/schedule/validator_checks.h"
#include "core/schedule/validator_skips.h"

namespace sluice {
namespace schedule {

std::string ValidationIssue::describe() const {
  if (rank < 0) return "schedule: " + message;
  if (position < 0) return "rank " + std::to_string(rank) + ": " + message;
  return "rank " + std::to_string(rank) + ", action " + std::to_string(position) + " (" + action + "): " + message;
}

std::optional<ValidationIssue> find_problem(const Schedule& schedule) {
  if (auto issue = detail::check_header(schedule)) return issue;
  if (auto issue = detail::check_actions(schedule)) return issue;
  if (auto issue = detail::check_skips(schedule)) return issue;
  if (is_lowered(schedule)) return detail::rendezvous_dry_run(schedule);
  // Only whether the run finishes matters here, not when each action starts.
  detail::DependencyRun run(schedule, CostModel{});
  detail::StartedAction ignored;
  while (run.next(ignored)) continue;
  const auto stall = run.stall();
  if (!stall) return std::nullopt;
  return ValidationIssue{stall->rank, static_cast<long>(stall->position), to_string(stall->action),
                         "deadlock: waits forever for " + stall->waiting_for + ", which another rank runs only later"};
}

void validate(const Schedule& schedule) {
  if (auto issue = find_problem(schedule)) throw Error(ErrorCode::kInvalidArgument, issue->describe());
}

}  // namespace schedule
}  // namespace sluice
