#include "core/schedule/action.h"

#include <gtest/gtest.h>

#include "core/common/error.h"

namespace sluice {
namespace schedule {
namespace {

TEST(ActionTest, EveryKindRoundTripsThroughText) {
  const ActionKind kinds[] = {ActionKind::F,      ActionKind::B,      ActionKind::I,      ActionKind::W,
                              ActionKind::SEND_F, ActionKind::RECV_F, ActionKind::SEND_B, ActionKind::RECV_B};
  for (ActionKind kind : kinds) {
    const Action action{12, kind, 345};
    EXPECT_EQ(parse_action(to_string(action)), action) << to_string(action);
  }
}

TEST(ActionTest, TextFormMatchesTheDocumentedSpelling) {
  EXPECT_EQ(to_string({2, ActionKind::F, 0}), "2F0");
  EXPECT_EQ(to_string({1, ActionKind::SEND_F, 0}), "1SEND_F0");
  EXPECT_EQ(to_string({1, ActionKind::RECV_B, 0}), "1RECV_B0");
  EXPECT_EQ(parse_action("0W1"), (Action{0, ActionKind::W, 1}));
  EXPECT_EQ(parse_action("10I23"), (Action{10, ActionKind::I, 23}));
}

void expect_rejected(const std::string& text, const std::string& fragment) {
  try {
    parse_action(text);
    ADD_FAILURE() << "'" << text << "' was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
    const std::string message = error.what();
    EXPECT_NE(message.find("'" + text + "'"), std::string::npos) << message;
    EXPECT_NE(message.find(fragment), std::string::npos) << message;
  }
}

TEST(ActionTest, MalformedTextIsRejectedNamingTheText) {
  expect_rejected("F0", "missing stage number");
  expect_rejected("2X0", "unknown kind 'X'");
  expect_rejected("2F", "missing micro-batch number");
  expect_rejected("2F0x", "trailing text 'x'");
  expect_rejected("2SEND0", "unknown kind 'SEND'");
  expect_rejected("", "missing stage number");
  expect_rejected("99999999999F0", "too large");
}

TEST(ActionTest, ComputeAndCommunicationKindsArePartitioned) {
  EXPECT_TRUE(is_compute(ActionKind::I));
  EXPECT_FALSE(is_compute(ActionKind::SEND_B));
  EXPECT_TRUE(is_communication(ActionKind::RECV_F));
}

// The engine's hot loops rely on these being compile-time (hence inlinable) definitions.
static_assert(is_compute(ActionKind::W) && !is_compute(ActionKind::RECV_B), "is_compute is constexpr");
static_assert(is_communication(ActionKind::SEND_F), "is_communication is constexpr");
static_assert(Action{1, ActionKind::B, 2} == Action{1, ActionKind::B, 2} &&
                  Action{1, ActionKind::B, 2} != Action{1, ActionKind::I, 2},
              "Action equality is constexpr");

}  // namespace
}  // namespace schedule
}  // namespace sluice
