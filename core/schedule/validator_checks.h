// Internal (public to the tests only): the validator's static checks (no simulated time involved).
#pragma once

#include <optional>

#include "core/schedule/schedule.h"
#include "core/schedule/validator.h"

namespace sluice {
namespace schedule {
namespace detail {

// Sizes and stage placement.
std::optional<ValidationIssue> check_header(const Schedule& schedule);
// Ranges, placement, exactly-once, same-rank ordering, accumulation order, SEND/RECV pairing.
std::optional<ValidationIssue> check_actions(const Schedule& schedule);

// check_actions() decides in one of two ways, exposed for the test that they agree
// (tests/schedule/validator_paths_agree_test.cc). Both need a header that check_header() accepts.
// Fast path: one fused pass, yes or no; check_actions() trusts its yes.
bool actions_pass_fast_path(const Schedule& schedule);
// Slow path: separate passes naming the first issue; check_actions() reports from it after a fast-path no.
std::optional<ValidationIssue> check_actions_slow_path(const Schedule& schedule);

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
