// Internal: replays a lowered schedule with blocking (rendezvous) send/recv: a SEND and its RECV complete only
// together, when both ranks have reached them. Compute actions never block here (the static checks already
// proved their inputs arrive through earlier RECVs or earlier local actions).
#pragma once

#include <optional>

#include "core/schedule/schedule.h"
#include "core/schedule/validator.h"

namespace sluice {
namespace schedule {
namespace detail {

// The action the peer must be at for a SEND/RECV `action` to complete (its stage names the peer's rank).
Action counterpart(const Action& action);

// Expects a schedule that passed check_header/check_actions. Reports the first rank stuck in a deadlock.
std::optional<ValidationIssue> rendezvous_dry_run(const Schedule& schedule);

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
