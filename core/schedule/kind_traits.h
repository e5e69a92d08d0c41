// Internal: inline forms of action.h's kind predicates and equality for the engine's hot loops. The public
// versions live out of line in action.cc, and one call per action is measurable at p = 512, m = 4096 (tens
// of millions of actions); these must agree with them exactly.
#pragma once

#include "core/schedule/action.h"

namespace sluice {
namespace schedule {
namespace detail {

constexpr bool computes(ActionKind kind) {
  return kind == ActionKind::F || kind == ActionKind::B || kind == ActionKind::I || kind == ActionKind::W;
}

constexpr bool communicates(ActionKind kind) { return !computes(kind); }

// B and I both produce the input gradient that the previous stage waits for.
constexpr bool produces_input_gradient(ActionKind kind) { return kind == ActionKind::B || kind == ActionKind::I; }

inline bool same_action(const Action& a, const Action& b) {
  return a.stage == b.stage && a.kind == b.kind && a.microbatch == b.microbatch;
}

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
