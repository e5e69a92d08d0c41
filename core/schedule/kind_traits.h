// Internal: kind predicates the engine needs beyond action.h's public ones (which are constexpr there, so the
// hot loops use them directly).
#pragma once

#include "core/schedule/action.h"

namespace sluice {
namespace schedule {
namespace detail {

// B and I both produce the input gradient that the previous stage waits for.
constexpr bool produces_input_gradient(ActionKind kind) { return kind == ActionKind::B || kind == ActionKind::I; }

// One result a compute action waits for: the forward output (forward) or the input gradient of `stage`.
struct ActionInput {
  int stage;
  bool forward;
};

// The results `action` needs before it can start, in the order the engines check them; returns how many (0-2).
// F needs the previous stage's forward; B and I their own stage's forward and the next stage's input gradient;
// W its own stage's input gradient; SEND/RECV need nothing here. The one statement of the rule that the dependency
// run and the longest-path walk (which must agree bit for bit) both use.
constexpr int action_inputs(const Action& action, int stages, ActionInput inputs[2]) {
  const int s = action.stage;
  switch (action.kind) {
    case ActionKind::F:
      if (s == 0) return 0;
      inputs[0] = {s - 1, true};
      return 1;
    case ActionKind::B:
    case ActionKind::I:
      inputs[0] = {s, true};
      if (s == stages - 1) return 1;
      inputs[1] = {s + 1, false};
      return 2;
    case ActionKind::W:
      inputs[0] = {s, false};
      return 1;
    default: return 0;
  }
}

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
