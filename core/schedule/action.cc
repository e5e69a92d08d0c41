#include "core/schedule/action.h"

#include <cctype>

#include "core/common/error.h"

namespace sluice {
namespace schedule {
namespace {

constexpr ActionKind kAllKinds[] = {ActionKind::F,         ActionKind::B,         ActionKind::I,
                                    ActionKind::W,         ActionKind::SEND_F,    ActionKind::RECV_F,
                                    ActionKind::SEND_B,    ActionKind::RECV_B,    ActionKind::SEND_SKIP,
                                    ActionKind::RECV_SKIP, ActionKind::SEND_SKIP_GRAD, ActionKind::RECV_SKIP_GRAD};

[[noreturn]] void fail(const std::string& text, const std::string& why) {
  throw Error(ErrorCode::kInvalidArgument, "bad action '" + text + "': " + why +
                                               " (expected <stage><KIND><microbatch> with KIND one of F, B, I, W, "
                                               "SEND_F, RECV_F, SEND_B, RECV_B, e.g. 2F0 or 1SEND_B3; skip messages "
                                               "SEND_SKIP, RECV_SKIP, SEND_SKIP_GRAD, RECV_SKIP_GRAD add "
                                               "@<peer stage>, e.g. 0SEND_SKIP3@5)");
}

// Reads a run of decimal digits starting at `pos`; bounded so that a huge number is an error, not an overflow.
int read_number(const std::string& text, size_t& pos, const char* what) {
  const size_t begin = pos;
  long long value = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
    value = value * 10 + (text[pos] - '0');
    if (value > 1000000000LL) fail(text, std::string(what) + " is too large");
    ++pos;
  }
  if (pos == begin) fail(text, std::string("missing ") + what);
  return static_cast<int>(value);
}

}  // namespace

const char* kind_name(ActionKind kind) {
  switch (kind) {
    case ActionKind::F: return "F";
    case ActionKind::B: return "B";
    case ActionKind::I: return "I";
    case ActionKind::W: return "W";
    case ActionKind::SEND_F: return "SEND_F";
    case ActionKind::RECV_F: return "RECV_F";
    case ActionKind::SEND_B: return "SEND_B";
    case ActionKind::RECV_B: return "RECV_B";
    case ActionKind::SEND_SKIP: return "SEND_SKIP";
    case ActionKind::RECV_SKIP: return "RECV_SKIP";
    case ActionKind::SEND_SKIP_GRAD: return "SEND_SKIP_GRAD";
    case ActionKind::RECV_SKIP_GRAD: return "RECV_SKIP_GRAD";
  }
  return "?";
}

std::string to_string(const Action& action) {
  std::string text = std::to_string(action.stage) + kind_name(action.kind) + std::to_string(action.microbatch);
  if (is_skip_message(action.kind)) text += "@" + std::to_string(action.peer);
  return text;
}

Action parse_action(const std::string& text) {
  size_t pos = 0;
  Action action;
  action.stage = read_number(text, pos, "stage number");
  const size_t kind_begin = pos;
  while (pos < text.size() && (std::isupper(static_cast<unsigned char>(text[pos])) || text[pos] == '_')) ++pos;
  const std::string kind_text = text.substr(kind_begin, pos - kind_begin);
  if (kind_text.empty()) fail(text, "missing action kind after the stage number");
  bool known = false;
  for (ActionKind kind : kAllKinds) {
    if (kind_text == kind_name(kind)) {
      action.kind = kind;
      known = true;
    }
  }
  if (!known) fail(text, "unknown kind '" + kind_text + "'");
  action.microbatch = read_number(text, pos, "micro-batch number");
  if (pos < text.size() && text[pos] == '@') {
    if (!is_skip_message(action.kind)) fail(text, "only skip messages name a peer stage ('@')");
    ++pos;
    action.peer = read_number(text, pos, "peer stage after '@'");
  } else if (is_skip_message(action.kind)) {
    fail(text, std::string(kind_name(action.kind)) + " needs its peer stage: '@<stage>' after the micro-batch");
  }
  if (pos != text.size()) fail(text, "unexpected trailing text '" + text.substr(pos) + "'");
  return action;
}

}  // namespace schedule
}  // namespace sluice
