// longest_path_makespan() must give the dependency run's (simulate()'s) compute-only makespan bit for bit: lowering
// compares replays against it, so any difference could change which placement it picks.
#include "core/schedule/longest_path.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/schedule/generators.h"
#include "core/schedule/simulator.h"
#include "tests/schedule/test_grid.h"

namespace sluice {
namespace schedule {
namespace {

using testing::costs_of;

// Whole-number, power-of-two-step, off-step (0.3), latency and bandwidth costs.
std::vector<CostModel> cost_shapes() {
  std::vector<CostModel> shapes = {costs_of(1, 1, 1), costs_of(2, 1, 0.5), costs_of(1.3, 0.7, 0.3),
                                   costs_of(2, 1, 1, 0.25), costs_of(1, 2, 0.1, 0.7)};
  CostModel bandwidth = costs_of(1, 1, 1, 0.1);
  bandwidth.bytes_per_message = 3;
  bandwidth.bandwidth = 7;
  shapes.push_back(bandwidth);
  return shapes;
}

// Per-stage costs that differ from stage to stage, as measured ones do.
CostModel per_stage_costs(int stages) {
  CostModel costs = costs_of(1, 1, 1, 0.05);
  for (int stage = 0; stage < stages; ++stage)
    costs.per_stage.push_back({1.0 + 0.1 * (stage % 3), 0.9 + 0.07 * stage, 0.4 + 0.03 * (stage % 5)});
  return costs;
}

TEST(LongestPathTest, EqualsTheDependencyRunOnTheGrid) {
  for (const auto& point : testing::valid_grid()) {
    const Schedule compute = make_schedule(point.name, point.ranks, point.microbatches, point.chunks);
    std::vector<CostModel> shapes = cost_shapes();
    shapes.push_back(per_stage_costs(compute.num_stages()));
    for (const CostModel& costs : shapes) {
      const auto makespan = detail::longest_path_makespan(compute, costs);
      ASSERT_TRUE(makespan.has_value()) << testing::describe(point);
      EXPECT_EQ(*makespan, simulate(compute, costs).makespan) << testing::describe(point) << " F=" << costs.forward;
    }
  }
}

TEST(LongestPathTest, EqualsTheDependencyRunAtLargerSizes) {
  for (const char* name : {"1f1b", "interleaved", "zb-h1", "zb-v"}) {
    const int chunks = std::string(name) == "zb-v" || std::string(name) == "interleaved" ? 2 : 1;
    for (int microbatches : {17, 64, 200}) {
      const Schedule compute = make_schedule(name, 32, microbatches, chunks);
      for (const CostModel& costs : cost_shapes())
        EXPECT_EQ(*detail::longest_path_makespan(compute, costs), simulate(compute, costs).makespan)
            << name << " m=" << microbatches;
    }
  }
}

TEST(LongestPathTest, NothingWhenARankNeverFinishes) {
  Schedule compute = make_schedule("1f1b", 2, 2, 1);
  // The last stage's first backward before its forward: the rank waits for an input only it could produce.
  std::swap(compute.actions[1][0], compute.actions[1][1]);
  EXPECT_FALSE(detail::longest_path_makespan(compute, costs_of(1, 1, 1)).has_value());
}

}  // namespace
}  // namespace schedule
}  // namespace sluice
