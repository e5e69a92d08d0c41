#include "bench/pipeline/results_table.h"

#include <gtest/gtest.h>

#include <sstream>

namespace sluice::bench {
namespace {

ScheduleResult example() {
  ScheduleResult r;
  r.schedule = "1f1b";
  r.pipe_ms = 125.0;
  r.seq_ms = 200.0;
  r.simulated_bubble = 0.2;
  r.measured_bubble = 0.25;
  r.executor_bubble = 0.19;
  return r;
}

// A pipeline that loses exactly its simulated bubble: T_pipe = T_seq / p / (1 - bubble) = 200 / 2 / 0.8.
TEST(ScheduleResult, EfficiencyIsOneWhenOnlyTheSimulatedBubbleIsLost) {
  EXPECT_NEAR(example().efficiency(2), 1.0, 1e-12);
}

TEST(ScheduleResult, EfficiencyDropsWhenThePipelineIsSlower) {
  ScheduleResult r = example();
  r.pipe_ms = 250.0;
  EXPECT_NEAR(r.efficiency(2), 0.5, 1e-12);
}

TEST(ScheduleResult, GapsAreAbsoluteDifferencesFromTheSimulation) {
  EXPECT_NEAR(example().gap(), 0.05, 1e-12);
  EXPECT_NEAR(example().executor_gap(), 0.01, 1e-12);
}

TEST(MarkdownTable, HasHeaderSeparatorAndOneRowPerSchedule) {
  std::ostringstream out;
  ScheduleResult second = example();
  second.schedule = "zb-v (v=2)";
  print_markdown_table(out, {example(), second}, 2);
  const std::string text = out.str();
  EXPECT_EQ(text.rfind("| schedule | T_pipe ms | T_seq ms |", 0), 0u) << text;
  EXPECT_NE(text.find("|---|"), std::string::npos);
  EXPECT_NE(text.find("| 1f1b | 125.0 | 200.0 | 0.200 | 0.250 | 0.050 | 1.000 | 0.190 | 0.010 |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("| zb-v (v=2) |"), std::string::npos);
  int lines = 0;
  for (char c : text) lines += c == '\n';
  EXPECT_EQ(lines, 4);
}

}  // namespace
}  // namespace sluice::bench

namespace sluice::bench {
namespace {

TEST(BreakdownTable, ShowsWhereTheStepTimeGoes) {
  ScheduleResult r = example();
  r.busy_ms = 100.0;
  r.wait_ms = 12.5;
  r.outside_ms = 3.3;
  r.simulated_ms = 111.0;
  r.optimizer_ms = 2.5;
  std::ostringstream out;
  print_breakdown_table(out, {r});
  EXPECT_NE(out.str().find("| 1f1b | 100.0 | 12.5 | 3.3 | 2.5 | 111.0 |"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace sluice::bench
