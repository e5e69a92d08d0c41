// The schedule IR's atom: one thing a rank does (compute or point-to-point communication) for one stage and
// one micro-batch. The text form `<stage><KIND><mb>` (e.g. `2F0`, `1SEND_F3`) is what users write in schedule
// files and what `sluice plan` prints, so it must round-trip exactly.
#pragma once

#include <string>

namespace sluice {
namespace schedule {

enum class ActionKind { F, B, I, W, SEND_F, RECV_F, SEND_B, RECV_B };

struct Action {
  int stage = 0;  // global virtual stage 0..ranks*chunks-1
  ActionKind kind = ActionKind::F;
  int microbatch = 0;
};

// Defined here, inline and constexpr, because the engine's hot loops test tens of millions of actions at
// p = 512, m = 4096, where an out-of-line call per action is measurable.
constexpr bool operator==(const Action& a, const Action& b) {
  return a.stage == b.stage && a.kind == b.kind && a.microbatch == b.microbatch;
}
constexpr bool operator!=(const Action& a, const Action& b) { return !(a == b); }

constexpr bool is_compute(ActionKind kind) {
  return kind == ActionKind::F || kind == ActionKind::B || kind == ActionKind::I || kind == ActionKind::W;
}
constexpr bool is_communication(ActionKind kind) { return !is_compute(kind); }

const char* kind_name(ActionKind kind);

std::string to_string(const Action& action);

// Throws sluice::Error(kInvalidArgument) quoting `text` and saying which part is malformed.
Action parse_action(const std::string& text);

}  // namespace schedule
}  // namespace sluice
