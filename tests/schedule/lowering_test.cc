#include "core/schedule/lowering.h"

#include <gtest/gtest.h>

#include <string>

#include "core/common/error.h"
#include "core/schedule/generators.h"
#include "core/schedule/replay.h"
#include "core/schedule/simulator.h"
#include "core/schedule/validator.h"
#include "tests/schedule/test_grid.h"

namespace sluice {
namespace schedule {
namespace {

using testing::describe;
using testing::valid_grid;

TEST(LoweringTest, EveryGridScheduleLowersToADeadlockFreeValidSchedule) {
  for (const auto& point : valid_grid()) {
    const Schedule compute = make_schedule(point.name, point.ranks, point.microbatches, point.chunks);
    const Schedule lowered = lower(compute);
    const auto issue = find_problem(lowered);
    EXPECT_FALSE(issue.has_value()) << describe(point) << ": " << issue->describe();
    // Lowering only adds communication: each rank's compute order is untouched.
    EXPECT_EQ(compute_only(lowered).actions, compute.actions) << describe(point);
    EXPECT_EQ(peak_inflight(lowered), peak_inflight(compute)) << describe(point);
  }
}

int count_kind(const Schedule& schedule, ActionKind kind) {
  int count = 0;
  for (const auto& list : schedule.actions)
    for (const Action& action : list) count += action.kind == kind;
  return count;
}

TEST(LoweringTest, MessagesOnlyCrossRanks) {
  // Looped: every stage boundary crosses ranks, once per micro-batch and direction.
  const Schedule looped = lower(make_schedule("interleaved", 3, 6, 2));
  const int boundaries = 3 * 2 - 1;
  EXPECT_EQ(count_kind(looped, ActionKind::SEND_F), boundaries * 6);
  EXPECT_EQ(count_kind(looped, ActionKind::RECV_B), boundaries * 6);
  // V: the turn (stage p-1 -> p) stays on rank p-1, so one boundary has no messages.
  const Schedule v = lower(make_schedule("zb-v", 3, 4, 2));
  EXPECT_EQ(count_kind(v, ActionKind::SEND_F), (6 - 1 - 1) * 4);
  EXPECT_EQ(count_kind(v, ActionKind::SEND_B), (6 - 1 - 1) * 4);
  // One rank: nothing to send.
  EXPECT_FALSE(is_lowered(lower(make_schedule("1f1b", 1, 4, 1))));
}

TEST(LoweringTest, SendsLeaveBeforeTheRanksNextComputation) {
  // The executor frees a sent activation right away, so the SEND must not wait behind more compute.
  const Schedule lowered = lower(make_schedule("1f1b", 4, 8, 1));
  for (const auto& list : lowered.actions) {
    for (size_t i = 0; i < list.size(); ++i) {
      if (list[i].kind != ActionKind::F || list[i].stage == 3) continue;
      size_t j = i + 1;
      while (j < list.size() && is_communication(list[j].kind) && list[j] != Action{list[i].stage, ActionKind::SEND_F, list[i].microbatch}) ++j;
      ASSERT_LT(j, list.size()) << to_string(list[i]);
      EXPECT_EQ(list[j], (Action{list[i].stage, ActionKind::SEND_F, list[i].microbatch})) << to_string(list[i]);
    }
  }
}

// The makespans lower_and_replay() hands out are the ones its callers would otherwise compute again.
TEST(LoweringTest, LowerAndReplayReportsTheChosenListsReplays) {
  // Unit, power-of-two step, off-step, latency, and a transfer longer than an action.
  const CostModel shapes[] = {testing::costs_of(1, 1, 1), testing::costs_of(2, 1, 0.5),
                              testing::costs_of(1.3, 0.7, 0.3), testing::costs_of(1, 1, 1, 0.3),
                              testing::costs_of(2, 1, 1, 2.5)};
  for (const auto& point : valid_grid()) {
    const Schedule compute = make_schedule(point.name, point.ranks, point.microbatches, point.chunks);
    for (const CostModel& costs : shapes) {
      const CostedLowering result = lower_and_replay(compute, costs);
      EXPECT_EQ(result.compute_only, simulate(compute, costs).makespan) << describe(point);
      EXPECT_EQ(result.posting_order, replay_makespan(result.lowered, costs, TransferMode::kPostingOrder))
          << describe(point);
      EXPECT_EQ(result.blocking, replay_makespan(result.lowered, costs, TransferMode::kBlocking)) << describe(point);
    }
  }
}

// A per-stage cost table must have one entry per stage; the lowering reports a wrong length as the simulator does
// (its compute-only walk would otherwise read past a short table or ignore a long one's extra entries).
TEST(LoweringTest, PerStageCostsOfTheWrongLengthAreRefusedNamingBothLengths) {
  const Schedule compute = make_schedule("1f1b", 2, 4, 1);
  for (size_t entries : {size_t{1}, size_t{3}}) {
    CostModel costs;
    costs.per_stage.assign(entries, StageCost{1, 1, 1});
    try {
      lower(compute, costs);
      ADD_FAILURE() << entries << " per-stage entries accepted for 2 stages";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find("per_stage has " + std::to_string(entries) +
                                               " entries but the schedule has 2 stages"),
                std::string::npos)
          << error.what();
    }
  }
}

// The same at sizes where the rendezvous play's own timeline (kept without replays when it reaches compute only)
// has many ranks interleaving.
TEST(LoweringTest, LowerAndReplayMatchesFreshReplaysAtLargerSizes) {
  const CostModel shapes[] = {testing::costs_of(2, 1, 0.5), testing::costs_of(1.3, 0.7, 0.3),
                              testing::costs_of(1, 1, 1, 0.3)};
  for (const char* name : {"gpipe", "1f1b", "interleaved", "zb-h1", "zb-v"}) {
    const int chunks = std::string(name) == "zb-v" || std::string(name) == "interleaved" ? 2 : 1;
    for (int ranks : {16, 32}) {
      for (int microbatches : {31, 64}) {
        const Schedule compute = make_schedule(name, ranks, microbatches, chunks);
        for (const CostModel& costs : shapes) {
          const CostedLowering result = lower_and_replay(compute, costs);
          const std::string where = std::string(name) + " p=" + std::to_string(ranks) + " m=" +
                                    std::to_string(microbatches) + " F=" + std::to_string(costs.forward);
          EXPECT_EQ(result.compute_only, simulate(compute, costs).makespan) << where;
          EXPECT_EQ(result.posting_order, replay_makespan(result.lowered, costs, TransferMode::kPostingOrder))
              << where;
          EXPECT_EQ(result.blocking, replay_makespan(result.lowered, costs, TransferMode::kBlocking)) << where;
        }
      }
    }
  }
}

TEST(LoweringTest, RefusesAlreadyLoweredSchedules) {
  const Schedule lowered = lower(make_schedule("1f1b", 2, 2, 1));
  EXPECT_THROW(lower(lowered), Error);
}

}  // namespace
}  // namespace schedule
}  // namespace sluice
