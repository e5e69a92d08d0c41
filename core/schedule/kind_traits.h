// Internal: kind predicates the engine needs beyond action.h's public ones (which are constexpr there, so the
// hot loops use them directly).
#pragma once

#include "core/schedule/action.h"

namespace sluice {
namespace schedule {
namespace detail {

// B and I both produce the input gradient that the previous stage waits for.
constexpr bool produces_input_gradient(ActionKind kind) { return kind == ActionKind::B || kind == ActionKind::I; }

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
