// Internal: the validator's checks of Schedule::skips and of the skip messages (action.h), apart from the main
// chain's checks (validator_checks.h), whose position table and fused pass cover F/B/I/W and SEND/RECV_F/B only.
// A skip is `from < to`, both stages in range, listed once. In a lowered schedule, every skip whose stages sit on
// different ranks has, per micro-batch, SEND_SKIP after the producer's F and RECV_SKIP before the reader's F, and,
// where the reader's backward runs, SEND_SKIP_GRAD after the reader's backward (B or I) and RECV_SKIP_GRAD before
// the producer's; each message exactly once, with its counterpart. Skips between stages of one rank get none.
// Whether the messages can deadlock is the rendezvous dry run's question (rendezvous_dry_run.h).
#pragma once

#include <optional>

#include "core/schedule/schedule.h"
#include "core/schedule/validator.h"

namespace sluice {
namespace schedule {
namespace detail {

// Expects a schedule that passed check_header and check_actions.
std::optional<ValidationIssue> check_skips(const Schedule& schedule);

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
