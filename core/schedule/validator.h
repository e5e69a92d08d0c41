// Checks that a schedule (compute-only or lowered) is something the executor can run correctly:
// every (stage, micro-batch) computed exactly once (F once, and B once or I+W once), data dependencies
// respected (F(s) before F(s+1), backward in reverse stage order, I before W), weight gradients of a stage
// accumulated in micro-batch order, every SEND matched by its RECV on the right rank, the skips' messages
// (validator_skips.h: each crossing skip's SEND_SKIP/RECV_SKIP and gradient pair per micro-batch), and a dry run
// (dependency waits, or blocking rendezvous for lowered schedules) that finishes without deadlock.
#pragma once

#include <optional>
#include <string>

#include "core/schedule/schedule.h"

namespace sluice {
namespace schedule {

struct ValidationIssue {
  int rank = -1;       // -1: the schedule's header (sizes, placement)
  long position = -1;  // 0-based index in the rank's list; -1: the rank as a whole (e.g. something missing)
  std::string action;  // text of the offending action, empty when position is -1
  std::string message;
  // "rank 2, action 7 (2W3): <message>", "rank 1: <message>" or "schedule: <message>".
  std::string describe() const;
};

// The first problem found, or nothing when the schedule is valid.
std::optional<ValidationIssue> find_problem(const Schedule& schedule);

// Throws sluice::Error(kInvalidArgument, issue.describe()) on the first problem.
void validate(const Schedule& schedule);

}  // namespace schedule
}  // namespace sluice
