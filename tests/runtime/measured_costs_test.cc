#include "core/runtime/measured_costs.h"

#include <gtest/gtest.h>

#include "core/common/error.h"
#include "core/schedule/generators.h"
#include "core/schedule/simulator.h"

namespace sluice::runtime {
namespace {

constexpr int kF = static_cast<int>(ComputeKind::kF);
constexpr int kB = static_cast<int>(ComputeKind::kB);
constexpr int kI = static_cast<int>(ComputeKind::kI);
constexpr int kW = static_cast<int>(ComputeKind::kW);

// Every (stage, micro-batch) runs one forward and one backward: P*V*M of each.
TEST(CountComputeActions, FusedScheduleHasOneForwardAndOneBackwardPerStageAndMicrobatch) {
  const KindCounts counts = count_compute_actions(schedule::make_schedule("interleaved", 2, 8, 2));
  EXPECT_EQ(counts[kF], 2 * 2 * 8);
  EXPECT_EQ(counts[kB] + counts[kI], 2 * 2 * 8);
  EXPECT_EQ(counts[kI], counts[kW]);
}

TEST(CountComputeActions, ZeroBubbleScheduleSplitsBackwardIntoInputAndWeight) {
  const KindCounts counts = count_compute_actions(schedule::make_schedule("zb-h1", 2, 8));
  EXPECT_EQ(counts[kF], 16);
  EXPECT_GT(counts[kI], 0);
  EXPECT_EQ(counts[kI], counts[kW]);
  EXPECT_EQ(counts[kB] + counts[kI], 16);
}

TEST(CostsFromBusy, FusedBackwardIsFedAsInputCostWithZeroWeightCost) {
  KindCounts counts{};
  counts[kF] = 16;
  counts[kB] = 16;
  KindSeconds busy{};
  busy[kF] = 16 * 0.002;
  busy[kB] = 16 * 0.005;
  const schedule::CostModel costs = costs_from_busy(busy, counts, 1e-4);
  EXPECT_DOUBLE_EQ(costs.forward, 0.002);
  EXPECT_DOUBLE_EQ(costs.backward_input, 0.005);
  EXPECT_DOUBLE_EQ(costs.backward_weight, 0.0);
  EXPECT_DOUBLE_EQ(costs.latency, 1e-4);
}

TEST(CostsFromBusy, SplitBackwardKeepsTheMeasuredInputToWeightRatio) {
  KindCounts counts{};
  counts[kF] = 16;
  counts[kB] = 4;   // a schedule may fuse some backwards; their time is spread over all pairs
  counts[kI] = 12;
  counts[kW] = 12;
  KindSeconds busy{};
  busy[kF] = 1.6;
  busy[kB] = 4 * 0.4;
  busy[kI] = 12 * 0.3;
  busy[kW] = 12 * 0.1;
  const schedule::CostModel costs = costs_from_busy(busy, counts, 0.0);
  EXPECT_DOUBLE_EQ(costs.forward, 0.1);
  EXPECT_NEAR(costs.backward_input + costs.backward_weight, 0.4, 1e-12);
  EXPECT_NEAR(costs.backward_input / costs.backward_weight, 3.0, 1e-9);
}

// End to end with the simulator: uniform F = 1, B = 2 on 1F1B gives the literature's (p-1)/(m+p-1).
TEST(CostsFromBusy, FedToTheSimulatorReproducesTheOneFOneBClosedForm) {
  const schedule::Schedule s = schedule::make_schedule("1f1b", 2, 8);
  const KindCounts counts = count_compute_actions(s);
  KindSeconds busy{};
  busy[kF] = 1.0 * counts[kF];
  busy[kB] = 2.0 * counts[kB];
  const double bubble = schedule::simulate(s, costs_from_busy(busy, counts, 0.0)).bubble_fraction;
  EXPECT_NEAR(bubble, 1.0 / 9.0, 1e-12);
}

TEST(CostsFromBusy, RejectsScheduleWithoutForwards) {
  KindCounts counts{};
  counts[kB] = 4;
  try {
    costs_from_busy(KindSeconds{}, counts, 0.0);
    FAIL() << "expected sluice::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("no F action"), std::string::npos) << e.what();
  }
}

TEST(CostsFromBusy, RejectsMismatchedInputAndWeightCounts) {
  KindCounts counts{};
  counts[kF] = 4;
  counts[kI] = 4;
  counts[kW] = 3;
  try {
    costs_from_busy(KindSeconds{}, counts, 0.0);
    FAIL() << "expected sluice::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("4 I actions but 3 W actions"), std::string::npos) << e.what();
  }
}

TEST(Median, OddCountIsTheMiddleValueAndEvenCountTheMeanOfTheMiddleTwo) {
  EXPECT_DOUBLE_EQ(median({5.0, 1.0, 3.0}, "values"), 3.0);
  EXPECT_DOUBLE_EQ(median({4.0, 1.0, 3.0, 100.0}, "values"), 3.5);
}

TEST(Median, OfNothingNamesWhatWasMissing) {
  try {
    median({}, "step times");
    FAIL() << "expected sluice::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("step times"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sluice::runtime
