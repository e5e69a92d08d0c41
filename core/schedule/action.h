// The schedule IR's atom: one thing a rank does (compute or point-to-point communication) for one stage and
// one micro-batch. The text form `<stage><KIND><mb>` (e.g. `2F0`, `1SEND_F3`) is what users write in schedule
// files and what `sluice plan` prints, so it must round-trip exactly.
//
// Skip messages (a U-Net skip whose producer and reader sit on stages of different ranks, Schedule::skips) name
// the other end too: `<stage><KIND><mb>@<peer stage>`. SEND_SKIP runs on the producer's stage after its F and
// sends the micro-batch's skip tensors to the reader's stage, whose RECV_SKIP runs before its F; SEND_SKIP_GRAD
// runs on the reader's stage after its backward (B or I) and sends the skip tensors' gradient back, and the
// producer's RECV_SKIP_GRAD runs before its own backward. E.g. `0SEND_SKIP3@5`, `5RECV_SKIP3@0`.
#pragma once

#include <string>

namespace sluice {
namespace schedule {

enum class ActionKind { F, B, I, W, SEND_F, RECV_F, SEND_B, RECV_B, SEND_SKIP, RECV_SKIP, SEND_SKIP_GRAD, RECV_SKIP_GRAD };

struct Action {
  int stage = 0;  // global virtual stage 0..ranks*chunks-1
  ActionKind kind = ActionKind::F;
  int microbatch = 0;
  int peer = -1;  // skip messages only: the stage at the other end; -1 for every other kind
};

// Defined here, inline and constexpr, because the engine's hot loops test tens of millions of actions at
// p = 512, m = 4096, where an out-of-line call per action is measurable.
constexpr bool operator==(const Action& a, const Action& b) {
  return a.stage == b.stage && a.kind == b.kind && a.microbatch == b.microbatch && a.peer == b.peer;
}
constexpr bool operator!=(const Action& a, const Action& b) { return !(a == b); }

constexpr bool is_compute(ActionKind kind) {
  return kind == ActionKind::F || kind == ActionKind::B || kind == ActionKind::I || kind == ActionKind::W;
}
constexpr bool is_communication(ActionKind kind) { return !is_compute(kind); }
constexpr bool is_skip_message(ActionKind kind) {
  return kind == ActionKind::SEND_SKIP || kind == ActionKind::RECV_SKIP || kind == ActionKind::SEND_SKIP_GRAD ||
         kind == ActionKind::RECV_SKIP_GRAD;
}

const char* kind_name(ActionKind kind);

std::string to_string(const Action& action);

// Throws sluice::Error(kInvalidArgument) quoting `text` and saying which part is malformed.
Action parse_action(const std::string& text);

}  // namespace schedule
}  // namespace sluice
