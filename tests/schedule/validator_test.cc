#include "core/schedule/validator.h"

#include <gtest/gtest.h>

#include <sstream>

#include "core/common/error.h"
#include "core/schedule/generators.h"
#include "core/schedule/lowering.h"

namespace sluice {
namespace schedule {
namespace {

// Builds a schedule from per-rank action text without validating it.
Schedule build(int ranks, int chunks, int microbatches, std::vector<int> placement, std::vector<std::string> lines) {
  Schedule schedule;
  schedule.name = "hand-written";
  schedule.ranks = ranks;
  schedule.chunks = chunks;
  schedule.microbatches = microbatches;
  schedule.stage_to_rank = std::move(placement);
  for (const auto& line : lines) {
    std::istringstream words(line);
    schedule.actions.emplace_back();
    for (std::string word; words >> word;) schedule.actions.back().push_back(parse_action(word));
  }
  return schedule;
}

void expect_problem(const Schedule& schedule, const std::string& expected_fragment) {
  const auto issue = find_problem(schedule);
  ASSERT_TRUE(issue.has_value()) << "accepted; expected: " << expected_fragment;
  EXPECT_NE(issue->describe().find(expected_fragment), std::string::npos) << issue->describe();
  try {
    validate(schedule);
    ADD_FAILURE() << "validate() did not throw";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(std::string(error.what()), issue->describe());
  }
}

// Baselines the broken variants start from; each is valid.
Schedule two_rank_one_f_one_b() { return build(2, 1, 2, {0, 1}, {"0F0 0F1 0B0 0B1", "1F0 1B0 1F1 1B1"}); }
Schedule one_rank_two_chunks_split() {
  return build(1, 2, 2, {0, 0}, {"0F0 1F0 0F1 1F1 1I0 1W0 0I0 0W0 1I1 1W1 0I1 0W1"});
}

TEST(ValidatorTest, BaselinesAndGeneratedSchedulesAreValid) {
  EXPECT_FALSE(find_problem(two_rank_one_f_one_b()));
  EXPECT_FALSE(find_problem(one_rank_two_chunks_split()));
  EXPECT_NO_THROW(validate(lower(make_schedule("zb-v", 3, 5, 2))));
}

TEST(ValidatorTest, HeaderProblems) {
  Schedule wrong_placement = two_rank_one_f_one_b();
  wrong_placement.stage_to_rank = {0};
  expect_problem(wrong_placement, "schedule: stage_to_rank has 1 entries, expected ranks * chunks = 2");
  Schedule doubled = two_rank_one_f_one_b();
  doubled.stage_to_rank = {0, 0};
  expect_problem(doubled, "schedule: rank 0 holds 2 stages, expected chunks = 1");
  Schedule missing_rank = two_rank_one_f_one_b();
  missing_rank.actions.pop_back();
  expect_problem(missing_rank, "has action lists for 1 ranks, expected 2");
}

TEST(ValidatorTest, RangesAndPlacement) {
  expect_problem(build(2, 1, 2, {0, 1}, {"0F0 0F1 0B0 0B1 3F0", "1F0 1B0 1F1 1B1"}),
                 "rank 0, action 4 (3F0): stage 3 out of range 0..1");
  expect_problem(build(2, 1, 2, {0, 1}, {"0F0 0F1 0B0 0B1 0F2", "1F0 1B0 1F1 1B1"}),
                 "rank 0, action 4 (0F2): micro-batch 2 out of range 0..1");
  expect_problem(build(2, 1, 2, {0, 1}, {"0F0 0F1 0B0 0B1 1F0", "1B0 1F1 1B1"}),
                 "rank 0, action 4 (1F0): stage 1 belongs to rank 1, not rank 0");
}

TEST(ValidatorTest, EachPairComputedExactlyOnce) {
  expect_problem(build(2, 1, 2, {0, 1}, {"0F0 0F1 0B0 0B1 0F1", "1F0 1B0 1F1 1B1"}),
                 "rank 0, action 4 (0F1): duplicate: F of stage 0 micro-batch 1 already runs at action 1");
  expect_problem(build(2, 1, 2, {0, 1}, {"0F0 0F1 0B0 0B1", "1F0 1B0 1F1"}),
                 "rank 1: stage 1 micro-batch 1: no backward (neither B nor I+W) runs");
  expect_problem(build(1, 1, 1, {0}, {"0F0 0I0 0W0 0B0"}), "rank 0, action 3 (0B0): mixes a fused B with split I/W");
  expect_problem(build(1, 1, 1, {0}, {"0F0 0B0 0W0"}), "rank 0, action 2 (0W0): mixes split I/W with a fused B");
  expect_problem(build(1, 1, 1, {0}, {"0F0 0I0"}), "rank 0: stage 0 micro-batch 0: I runs but W never does");
  expect_problem(build(2, 1, 1, {0, 1}, {"0B0", "1F0 1B0"}), "rank 0, action 0 (0B0): needs 0F0, which rank 0 never runs");
}

TEST(ValidatorTest, ForwardRunsInStageOrder) {
  Schedule broken = one_rank_two_chunks_split();
  std::swap(broken.actions[0][0], broken.actions[0][1]);  // 1F0 before 0F0 on the same rank
  expect_problem(broken, "rank 0, action 0 (1F0): runs before 0F0 (action 1), which it needs");
  // Across ranks the same mistake shows up in the dry run as a wait that never ends.
  expect_problem(build(2, 1, 2, {0, 1}, {"0F0 0B0 0F1 0B1", "1F1 1F0 1B0 1B1"}), "deadlock");
}

TEST(ValidatorTest, BackwardRunsInReverseStageOrder) {
  Schedule broken = one_rank_two_chunks_split();
  // 0I0 moved before 1I0: stage 0's input gradient needs stage 1's first.
  broken.actions[0] = build(1, 2, 2, {0, 0}, {"0F0 1F0 0F1 1F1 0I0 1I0 1W0 0W0 1I1 1W1 0I1 0W1"}).actions[0];
  expect_problem(broken, "rank 0, action 4 (0I0): runs before the backward (B or I) of stage 1 micro-batch 0");
}

TEST(ValidatorTest, InputGradientBeforeWeightGradient) {
  expect_problem(build(1, 1, 1, {0}, {"0F0 0W0 0I0"}), "rank 0, action 1 (0W0): runs before 0I0 (action 2)");
}

TEST(ValidatorTest, WeightGradientsAccumulateInMicrobatchOrder) {
  expect_problem(build(1, 1, 2, {0}, {"0F0 0F1 0I0 0I1 0W1 0W0"}),
                 "rank 0, action 5 (0W0): weight gradients of stage 0 must accumulate in micro-batch order");
  expect_problem(build(1, 1, 2, {0}, {"0F0 0F1 0B1 0B0"}), "micro-batch order");
}

TEST(ValidatorTest, EverySendHasItsReceiveOnTheRightRank) {
  const std::string rank1 = "1RECV_F0 1F0 1B0 1SEND_B0";
  expect_problem(build(2, 1, 1, {0, 1}, {"0F0 0SEND_F0 0RECV_B0 0B0", "1F0 1B0 1SEND_B0"}),
                 "rank 0, action 1 (0SEND_F0): has no matching 1RECV_F0 on rank 1");
  expect_problem(build(2, 1, 1, {0, 1}, {"0F0 0SEND_F0 0RECV_B0 0B0", "1F0 1RECV_F0 1B0 1SEND_B0"}),
                 "rank 1, action 0 (1F0): runs before 1RECV_F0 (action 1)");
  expect_problem(build(2, 1, 1, {0, 1}, {"0F0 0SEND_F0 0RECV_B0 0B0", rank1 + " 1SEND_F0"}),
                 "rank 1, action 4 (1SEND_F0): no message is due here");
  expect_problem(build(2, 1, 1, {0, 1}, {"0SEND_F0 0F0 0RECV_B0 0B0", rank1}),
                 "rank 0, action 0 (0SEND_F0): runs before 0F0 (action 1)");
  EXPECT_FALSE(find_problem(build(2, 1, 1, {0, 1}, {"0F0 0SEND_F0 0RECV_B0 0B0", rank1})));
}

TEST(ValidatorTest, RendezvousDryRunCatchesTheClassicDeadlock) {
  // Rank 0 sends micro-batch 1 forward while rank 1 blocks sending micro-batch 0's gradient back.
  expect_problem(build(2, 1, 2, {0, 1},
                       {"0F0 0SEND_F0 0F1 0SEND_F1 0RECV_B0 0B0 0RECV_B1 0B1",
                        "1RECV_F0 1F0 1B0 1SEND_B0 1RECV_F1 1F1 1B1 1SEND_B1"}),
                 "rank 0, action 3 (0SEND_F1): deadlock with blocking send/recv: waits for 1RECV_F1 on rank 1, "
                 "which is blocked at action 3 (1SEND_B0)");
}

}  // namespace
}  // namespace schedule
}  // namespace sluice
