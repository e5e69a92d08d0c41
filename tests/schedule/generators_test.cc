#include "core/schedule/generators.h"

#include <gtest/gtest.h>

#include <map>

#include "core/common/error.h"
#include "core/schedule/validator.h"
#include "tests/schedule/test_grid.h"

namespace sluice {
namespace schedule {
namespace {

using testing::describe;
using testing::valid_grid;

TEST(GeneratorsTest, EveryGridScheduleIsValidAndComplete) {
  for (const auto& point : valid_grid()) {
    const Schedule schedule = make_schedule(point.name, point.ranks, point.microbatches, point.chunks);
    EXPECT_EQ(schedule.name, point.name);
    EXPECT_EQ(schedule.num_stages(), point.ranks * point.chunks) << describe(point);
    EXPECT_FALSE(find_problem(schedule).has_value())
        << describe(point) << ": " << find_problem(schedule)->describe();
  }
}

TEST(GeneratorsTest, OneFOneBWarmsUpWithRanksMinusRankMinusOneForwards) {
  const Schedule schedule = make_schedule("1f1b", 4, 8, 1);
  for (int rank = 0; rank < 4; ++rank) {
    int leading_forwards = 0;
    while (schedule.actions[rank][leading_forwards].kind == ActionKind::F) ++leading_forwards;
    // p-r-1 warm-up forwards, then the first steady-state F also precedes the first B.
    EXPECT_EQ(leading_forwards, 4 - rank - 1 + 1) << "rank " << rank;
  }
}

TEST(GeneratorsTest, PlacementIsLoopedExceptForTheV) {
  const Schedule looped = make_schedule("interleaved", 4, 8, 2);
  for (int stage = 0; stage < 8; ++stage) EXPECT_EQ(looped.rank_of(stage), stage % 4);
  const Schedule v = make_schedule("zb-v", 4, 8, 2);
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(v.rank_of(rank), rank);
    EXPECT_EQ(v.rank_of(7 - rank), rank);
  }
}

TEST(GeneratorsTest, ZeroBubbleSchedulesSplitBackwardAndRunWeightsInMicrobatchOrder) {
  for (const char* name : {"zb-h1", "zb-v"}) {
    const Schedule schedule = make_schedule(name, 4, 9, name == std::string("zb-v") ? 2 : 1);
    for (const auto& list : schedule.actions) {
      std::map<int, int> next_weight;  // stage -> expected micro-batch
      for (const Action& action : list) {
        EXPECT_NE(action.kind, ActionKind::B) << name;
        if (action.kind == ActionKind::W) {
          EXPECT_EQ(action.microbatch, next_weight[action.stage]++) << name;
        }
      }
    }
  }
}

void expect_invalid(const std::string& name, int p, int m, int v, const std::string& fragment) {
  try {
    make_schedule(name, p, m, v);
    ADD_FAILURE() << name << " P=" << p << " M=" << m << " V=" << v << " was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
  }
}

TEST(GeneratorsTest, InvalidCombinationsSayWhatWouldSatisfyThem) {
  expect_invalid("gpipe", 0, 4, 1, "ranks (stages) must be positive, got 0");
  expect_invalid("1f1b", 2, -1, 1, "microbatches must be positive, got -1");
  expect_invalid("1f1b", 2, 4, 0, "chunks must be positive, got 0");
  expect_invalid("gpipe", 2, 4, 2, "needs chunks = 1 (use interleaved or zb-v for several chunks), got chunks = 2");
  expect_invalid("1f1b", 2, 4, 3, "needs chunks = 1");
  expect_invalid("zb-h1", 2, 4, 2, "needs chunks = 1");
  expect_invalid("zb-v", 4, 8, 3, "needs chunks = 2 (two stages per rank in a V), got chunks = 3");
  expect_invalid("interleaved", 4, 8, 1, "needs chunks >= 2");
  expect_invalid("zero", 4, 8, 1, "unknown schedule 'zero' (expected one of: gpipe, 1f1b, interleaved, zb-h1, zb-v)");
}

}  // namespace
}  // namespace schedule
}  // namespace sluice
