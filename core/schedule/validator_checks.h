// Internal: the validator's static checks (no simulated time involved).
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

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
