// Skip messages in the schedule IR (issue 27 item 3): a U-Net skip whose producer and reader stages sit on
// different ranks travels straight between those two ranks (SEND_SKIP/RECV_SKIP, and its gradient back with
// SEND_SKIP_GRAD/RECV_SKIP_GRAD); the text form round-trips, lowering places the messages deadlock-free for every
// schedule, the stages between send nothing more, and validation names a missing or misplaced message.
#include <gtest/gtest.h>

#include <string>

#include "core/common/error.h"
#include "core/schedule/action.h"
#include "core/schedule/generators.h"
#include "core/schedule/lowering.h"
#include "core/schedule/replay.h"
#include "core/schedule/simulator.h"
#include "core/schedule/schedule_io.h"
#include "core/schedule/validator.h"
#include "tests/schedule/test_grid.h"

namespace sluice {
namespace schedule {
namespace {

using testing::describe;
using testing::valid_grid;

TEST(SkipMessagesTest, ActionsRoundTripThroughTextWithTheirPeer) {
  const Action send{0, ActionKind::SEND_SKIP, 3, 5};
  EXPECT_EQ(to_string(send), "0SEND_SKIP3@5");
  for (ActionKind kind : {ActionKind::SEND_SKIP, ActionKind::RECV_SKIP, ActionKind::SEND_SKIP_GRAD,
                          ActionKind::RECV_SKIP_GRAD}) {
    const Action action{7, kind, 12, 2};
    EXPECT_EQ(parse_action(to_string(action)), action) << to_string(action);
    EXPECT_TRUE(is_communication(kind));
  }
  EXPECT_EQ(parse_action("5RECV_SKIP_GRAD0@1"), (Action{5, ActionKind::RECV_SKIP_GRAD, 0, 1}));
}

void expect_bad_action(const std::string& text, const std::string& fragment) {
  try {
    parse_action(text);
    ADD_FAILURE() << "'" << text << "' was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
  }
}

TEST(SkipMessagesTest, MalformedSkipActionsAreRefused) {
  expect_bad_action("0SEND_SKIP3", "needs its peer stage");
  expect_bad_action("0SEND_F3@1", "only skip messages name a peer stage");
  expect_bad_action("0SEND_SKIP3@", "missing peer stage");
}

Schedule with_skips(Schedule compute, std::vector<SkipEdge> skips) {
  compute.skips = std::move(skips);
  return compute;
}

int count_skip_messages(const std::vector<Action>& list) {
  int count = 0;
  for (const Action& a : list) count += is_skip_message(a.kind);
  return count;
}

// First stage to last, on every schedule of the grid: valid, compute order untouched, and only the two ranks of
// the skip exchange its messages (4 per micro-batch between them, none where both stages share a rank).
TEST(SkipMessagesTest, AFirstToLastSkipLowersOnEveryScheduleBetweenItsTwoRanksOnly) {
  for (const auto& point : valid_grid()) {
    const Schedule plain = make_schedule(point.name, point.ranks, point.microbatches, point.chunks);
    const int last = plain.num_stages() - 1;
    if (last == 0) continue;
    const Schedule compute = with_skips(plain, {{0, last}});
    const CostModel costs = testing::costs_of(1.3, 0.7, 0.3, 0.2);
    const Schedule lowered_pairs[][2] = {{lower(compute), lower(plain)}, {lower(compute, costs), lower(plain, costs)}};
    for (const auto& pair : lowered_pairs) {
      const Schedule& lowered = pair[0];
      const auto issue = find_problem(lowered);
      ASSERT_FALSE(issue.has_value()) << describe(point) << ": " << issue->describe();
      EXPECT_EQ(lowered.skips, compute.skips);
      const int producer = plain.rank_of(0), reader = plain.rank_of(last);
      for (int rank = 0; rank < plain.ranks; ++rank) {
        const int expected = producer == reader || (rank != producer && rank != reader) ? 0 : 2 * point.microbatches;
        EXPECT_EQ(count_skip_messages(lowered.actions[rank]), expected) << describe(point) << " rank " << rank;
      }
      // Without its skip messages, each rank's list is the plain chain's lowering, untouched.
      std::vector<std::vector<Action>> chain = lowered.actions;
      for (auto& list : chain) {
        std::vector<Action> kept;
        for (const Action& a : list)
          if (!is_skip_message(a.kind)) kept.push_back(a);
        list = kept;
      }
      EXPECT_EQ(chain, pair[1].actions) << describe(point);
    }
  }
}

// The replays time skip messages: with one transfer per message, GPipe's only micro-batch waits for the skip from
// stage 0 at the last stage under blocking sends (rank 0 posts it after its activation, rank 2 after the activation
// from rank 1 arrives, so it completes one transfer after that), and the lowering reports the lists' replays.
TEST(SkipMessagesTest, ReplaysTimeSkipMessages) {
  const Schedule plain = make_schedule("gpipe", 3, 1);
  const CostModel costs = testing::costs_of(1, 1, 1, 1);
  const CostedLowering with = lower_and_replay(with_skips(plain, {{0, 2}}), costs);
  const double chain = replay_makespan(lower(plain, costs), costs, TransferMode::kBlocking);
  EXPECT_EQ(with.blocking, replay_makespan(with.lowered, costs, TransferMode::kBlocking));
  EXPECT_EQ(with.posting_order, replay_makespan(with.lowered, costs, TransferMode::kPostingOrder));
  EXPECT_GT(with.blocking, chain);
  Schedule undeclared = with.lowered;
  undeclared.skips.clear();
  EXPECT_THROW(replay_makespan(undeclared, costs, TransferMode::kBlocking), Error);
  for (const auto& point : valid_grid()) {
    if (point.microbatches > 4 || point.ranks > 4) continue;
    const Schedule compute = make_schedule(point.name, point.ranks, point.microbatches, point.chunks);
    if (compute.num_stages() < 3) continue;
    const Schedule lowered = lower(with_skips(compute, {{0, compute.num_stages() - 1}, {0, 2}}));
    for (TransferMode mode : {TransferMode::kPostingOrder, TransferMode::kBlocking})
      EXPECT_GE(replay_makespan(lowered, costs, mode), simulate(compute, costs).makespan) << describe(point);
  }
}

TEST(SkipMessagesTest, SeveralSkipsAndMiddleStagesLowerValidly) {
  const Schedule compute = with_skips(make_schedule("interleaved", 3, 5, 2), {{0, 5}, {1, 4}, {0, 3}, {2, 3}});
  const Schedule lowered = lower(compute);
  EXPECT_FALSE(find_problem(lowered).has_value()) << find_problem(lowered)->describe();
  // Stage s on rank s % 3: 0>5 and 2>3 cross ranks (4 messages per micro-batch each), 1>4 and 0>3 do not.
  int skip_messages = 0;
  for (const auto& list : lowered.actions) skip_messages += count_skip_messages(list);
  EXPECT_EQ(skip_messages, 2 * 4 * 5);
}

TEST(SkipMessagesTest, TextAndCsvRoundTripASkipSchedule) {
  const Schedule lowered = lower(with_skips(make_schedule("1f1b", 3, 3), {{0, 2}}));
  EXPECT_NE(to_text(lowered).find("\nskips 0>2\n"), std::string::npos) << to_text(lowered);
  const Schedule from_text = parse_text(to_text(lowered));
  EXPECT_EQ(from_text.skips, lowered.skips);
  EXPECT_EQ(from_text.actions, lowered.actions);
  const Schedule from_csv = parse_csv(to_csv(lowered));
  EXPECT_EQ(from_csv.skips, lowered.skips);
  EXPECT_EQ(from_csv.actions, lowered.actions);
}

// Two ranks, one micro-batch, skip 0>1 (the neighbour: its own message all the same).
const char* kHeader = "schedule s ranks 2 chunks 1 microbatches 1\nskips 0>1\n";
const char* kRank1 = "rank 1: 1RECV_SKIP0@0 1RECV_F0 1F0 1B0 1SEND_B0 1SEND_SKIP_GRAD0@0\n";

std::string problem_of(const std::string& rank0, const std::string& rank1 = kRank1, const std::string& header = kHeader) {
  try {
    parse_text(header + rank0 + rank1);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

void expect_contains(const std::string& text, const std::string& fragment) {
  EXPECT_NE(text.find(fragment), std::string::npos) << text;
}

TEST(SkipMessagesTest, ValidationNamesAMissingOrMisplacedSkipMessage) {
  const std::string good0 = "rank 0: 0F0 0SEND_SKIP0@1 0SEND_F0 0RECV_B0 0RECV_SKIP_GRAD0@1 0B0\n";
  EXPECT_EQ(problem_of(good0), "");
  // A missing RECV_SKIP: the send has no counterpart.
  expect_contains(problem_of(good0, "rank 1: 1RECV_F0 1F0 1B0 1SEND_B0 1SEND_SKIP_GRAD0@0\n"),
                  "(0SEND_SKIP0@1): has no matching 1RECV_SKIP0@0 on rank 1");
  // Both ends missing: the declared skip never arrives.
  expect_contains(problem_of("rank 0: 0F0 0SEND_F0 0RECV_B0 0RECV_SKIP_GRAD0@1 0B0\n",
                             "rank 1: 1RECV_F0 1F0 1B0 1SEND_B0 1SEND_SKIP_GRAD0@0\n"),
                  "the skip 0>1 of micro-batch 0 never arrives (no 1RECV_SKIP0@0)");
  // The gradient pair missing.
  expect_contains(problem_of("rank 0: 0F0 0SEND_SKIP0@1 0SEND_F0 0RECV_B0 0B0\n",
                             "rank 1: 1RECV_SKIP0@0 1RECV_F0 1F0 1B0 1SEND_B0\n"),
                  "the gradient of skip 0>1 of micro-batch 0 never arrives (no 0RECV_SKIP_GRAD0@1)");
  // Sent before it was made; received after it was used.
  expect_contains(problem_of("rank 0: 0SEND_SKIP0@1 0F0 0SEND_F0 0RECV_B0 0RECV_SKIP_GRAD0@1 0B0\n"),
                  "(0SEND_SKIP0@1): runs before the F of stage 0 micro-batch 0");
  expect_contains(problem_of(good0, "rank 1: 1RECV_F0 1F0 1RECV_SKIP0@0 1B0 1SEND_B0 1SEND_SKIP_GRAD0@0\n"),
                  "(1RECV_SKIP0@0): runs after the F of stage 1 micro-batch 0");
  expect_contains(problem_of("rank 0: 0F0 0SEND_SKIP0@1 0SEND_F0 0RECV_B0 0B0 0RECV_SKIP_GRAD0@1\n"),
                  "(0RECV_SKIP_GRAD0@1): runs after the backward (B or I) of stage 0 micro-batch 0");
  // An undeclared skip, and a message on the wrong rank.
  expect_contains(problem_of(good0, kRank1, "schedule s ranks 2 chunks 1 microbatches 1\n"),
                  "no skip 0>1 is declared");
  expect_contains(problem_of("rank 0: 0F0 0SEND_SKIP0@1 0SEND_F0 0RECV_B0 1RECV_SKIP_GRAD0@0 0B0\n"),
                  "stage 1 belongs to rank 1, not rank 0");
  // A skip that runs backwards.
  expect_contains(problem_of(good0, kRank1, "schedule s ranks 2 chunks 1 microbatches 1\nskips 1>0\n"),
                  "skip 1>0 must go from an earlier stage to a later one");
}

TEST(SkipMessagesTest, TheDryRunCatchesASkipMessageThatDeadlocks) {
  // Rank 0 waits to send the skip after the main chain's gradient, which rank 1 sends only after its backward,
  // which needs the skip.
  expect_contains(problem_of("rank 0: 0F0 0SEND_F0 0RECV_B0 0SEND_SKIP0@1 0RECV_SKIP_GRAD0@1 0B0\n"),
                  "deadlock with blocking send/recv");
}

}  // namespace
}  // namespace schedule
}  // namespace sluice
