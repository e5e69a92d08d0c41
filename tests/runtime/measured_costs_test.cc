#include "core/runtime/measured_costs.h"

#include <gtest/gtest.h>

#include "core/common/error.h"
#include "core/schedule/cost_profile.h"
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

// Synthetic measurements from known lines: per action of a 4-stage layout, F = 3e-4 + 2e-5 x rows, I = 1e-4 +
// 3e-5 x rows, W = 5e-5 x rows (no fixed part), message = 4e-6 + 1e-7 x rows. The fit at 32 and 4 rows recovers
// every a and b (stored for the whole model: 4 stages' worth), and the profile charges any other size and stage
// count by them.
schedule::CostModel synthetic(double rows) {
  schedule::CostModel c;
  c.forward = 3e-4 + 2e-5 * rows;
  c.backward_input = 1e-4 + 3e-5 * rows;
  c.backward_weight = 5e-5 * rows;
  c.latency = 4e-6 + 1e-7 * rows;
  return c;
}

// ZB-V on 2 ranks has 4 virtual stages, each with M forwards, M input and M weight gradients.
TEST(CountComputeActionsPerStage, EveryVirtualStageCountsItsOwnActions) {
  const std::vector<KindCounts> counts = count_compute_actions_per_stage(schedule::make_schedule("zb-v", 2, 4, 2));
  ASSERT_EQ(counts.size(), 4u);
  for (const KindCounts& c : counts) {
    EXPECT_EQ(c[kF], 4);
    EXPECT_EQ(c[kI], 4);
    EXPECT_EQ(c[kW], 4);
    EXPECT_EQ(c[kB], 0);
  }
}

// Each stage's costs from its own seconds: a last stage with a longer backward (the loss) stays longer, and the
// simulated 1F1B step is then bound by it, which mean costs over all stages would hide.
TEST(StageCostsFromBusy, KeepEachStagesOwnDurationsForTheSimulator) {
  const schedule::Schedule one_f_one_b = schedule::make_schedule("1f1b", 2, 8);
  const std::vector<KindCounts> counts = count_compute_actions_per_stage(one_f_one_b);
  std::vector<KindSeconds> busy(2, KindSeconds{});
  busy[0][kF] = 8 * 1.0;
  busy[0][kB] = 8 * 2.0;
  busy[1][kF] = 8 * 1.0;
  busy[1][kB] = 8 * 3.0;
  const std::vector<schedule::StageCost> stages = stage_costs_from_busy(busy, counts);
  ASSERT_EQ(stages.size(), 2u);
  EXPECT_DOUBLE_EQ(stages[0].forward, 1.0);
  EXPECT_DOUBLE_EQ(stages[0].backward_input + stages[0].backward_weight, 2.0);
  EXPECT_DOUBLE_EQ(stages[1].backward_input + stages[1].backward_weight, 3.0);
  schedule::CostModel costs;
  costs.per_stage = stages;
  EXPECT_DOUBLE_EQ(schedule::simulate(one_f_one_b, costs).makespan, 1.0 + 8 * (1.0 + 3.0) + 2.0);
}

TEST(StageCostsFromBusy, NamesTheStageWithoutActions) {
  std::vector<KindCounts> counts(2, KindCounts{});
  counts[0][kF] = 1;
  counts[0][kB] = 1;
  std::vector<KindSeconds> busy(2, KindSeconds{});
  try {
    stage_costs_from_busy(busy, counts);
    ADD_FAILURE() << "a stage without actions accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("stage 1: measured costs: the schedule has no F action"),
              std::string::npos)
        << error.what();
  }
}

TEST(FitCostProfile, RecoversFixedAndPerRowTermsFromTwoSizes) {
  const schedule::CostProfile p = fit_cost_profile({synthetic(32), 32}, {synthetic(4), 4}, 4, "zb-h1 stages 4");
  EXPECT_NEAR(p.forward_per_microbatch, 4 * 3e-4, 1e-12);
  EXPECT_NEAR(p.forward_per_sample, 4 * 2e-5, 1e-12);  // the whole model: 4 stages' worth per row
  EXPECT_NEAR(p.backward_input_per_microbatch, 4 * 1e-4, 1e-12);
  EXPECT_NEAR(p.backward_input_per_sample, 4 * 3e-5, 1e-12);
  EXPECT_NEAR(p.backward_weight_per_microbatch, 0.0, 1e-12);
  EXPECT_NEAR(p.backward_weight_per_sample, 4 * 5e-5, 1e-12);
  EXPECT_NEAR(p.message_latency, 4e-6, 1e-15);
  EXPECT_NEAR(p.message_per_row, 1e-7, 1e-15);
  EXPECT_DOUBLE_EQ(p.microbatch_rows, 32);
  EXPECT_EQ(p.fit_rows, "32 4");
  // Through the file and back, a size never measured on the same stages costs what the lines say.
  const schedule::CostModel one_row = schedule::costs_for(schedule::parse_cost_profile(schedule::to_text(p)), 4, 1);
  EXPECT_NEAR(one_row.forward, synthetic(1).forward, 1e-12);
  EXPECT_NEAR(one_row.backward_input, synthetic(1).backward_input, 1e-12);
  EXPECT_NEAR(one_row.latency, synthetic(1).latency, 1e-15);
  // Twice the stages, each with half the layers: half of both parts.
  EXPECT_NEAR(schedule::costs_for(p, 8, 32).forward, (3e-4 + 2e-5 * 32) / 2, 1e-12);
}

TEST(FitCostProfile, AnUnphysicalFitKeepsTheConfiguredSizeLinearInRows) {
  schedule::CostModel small = synthetic(4);
  small.forward = 0.1 * synthetic(32).forward;  // 4 rows for a tenth of 32 rows: cheaper per row, fixed term < 0
  const schedule::CostProfile p = fit_cost_profile({synthetic(32), 32}, {small, 4}, 4, "");
  EXPECT_EQ(p.forward_per_microbatch, 0.0);
  EXPECT_NEAR(schedule::costs_for(p, 4, 32).forward, synthetic(32).forward, 1e-12);
  EXPECT_NEAR(p.backward_input_per_microbatch, 4 * 1e-4, 1e-12);  // the other kinds keep their fit
  EXPECT_THROW(fit_cost_profile({synthetic(8), 8}, {synthetic(8), 8}, 4, ""), Error);
}

TEST(SecondMicrobatchCount, AboutAnEighthOfTheRowsAmongTheDivisors) {
  EXPECT_EQ(second_microbatch_count(256, 8), 64);   // 32 rows -> 4 rows
  EXPECT_EQ(second_microbatch_count(64, 8), 64);    // 8 rows -> 1 row
  EXPECT_EQ(second_microbatch_count(12, 4), 12);    // 3 rows -> 1 row (32 is no divisor; 12 is the nearest)
  EXPECT_EQ(second_microbatch_count(256, 256), 32); // already one row: 8 rows instead
  EXPECT_EQ(second_microbatch_count(1, 1), 0);      // no other size
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
