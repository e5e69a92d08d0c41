// Measured cost profiles (cost_profile.h): the text round-trips, per-sample figures scale to any layout, and a
// malformed file is refused naming what is wrong.
#include "core/schedule/cost_profile.h"

#include <gtest/gtest.h>

#include <string>

#include "core/common/error.h"

namespace sluice {
namespace schedule {
namespace {

CostModel measured() {
  CostModel costs;
  costs.forward = 0.003;
  costs.backward_input = 0.0025;
  costs.backward_weight = 0.0015;
  costs.latency = 1.7e-5;
  return costs;
}

TEST(CostProfileTest, ProfileOfALayoutGivesItsOwnCostsBackAndScalesWithRowsAndStages) {
  const CostProfile profile = profile_from(measured(), 4, 32, "1f1b stages 4 chunks 1");
  const CostModel same = costs_for(profile, 4, 32);
  EXPECT_DOUBLE_EQ(same.forward, 0.003);
  EXPECT_DOUBLE_EQ(same.backward_input, 0.0025);
  EXPECT_DOUBLE_EQ(same.backward_weight, 0.0015);
  EXPECT_DOUBLE_EQ(same.latency, 1.7e-5);
  // Twice the rows, twice the stages (each holding half as many layers): the same per-action cost.
  EXPECT_DOUBLE_EQ(costs_for(profile, 8, 64).forward, 0.003);
  // Half the rows on the same stages: half the cost; the message time does not scale.
  EXPECT_DOUBLE_EQ(costs_for(profile, 4, 16).backward_weight, 0.00075);
  EXPECT_DOUBLE_EQ(costs_for(profile, 4, 16).latency, 1.7e-5);
  EXPECT_THROW(costs_for(profile, 0, 16), Error);
  EXPECT_THROW(costs_for(profile, 4, 0), Error);
}

TEST(CostProfileTest, TextRoundTripsExactly) {
  const CostProfile profile = profile_from(measured(), 3, 7, "zb-v stages 3 chunks 2");
  const CostProfile back = parse_cost_profile(to_text(profile));
  EXPECT_EQ(back.forward_per_sample, profile.forward_per_sample);
  EXPECT_EQ(back.backward_input_per_sample, profile.backward_input_per_sample);
  EXPECT_EQ(back.backward_weight_per_sample, profile.backward_weight_per_sample);
  EXPECT_EQ(back.message_seconds, profile.message_seconds);
  EXPECT_EQ(back.microbatch_rows, 7);
  EXPECT_EQ(back.measured_with, "zb-v stages 3 chunks 2");
  EXPECT_EQ(to_text(back), to_text(profile));
}

// A profile as written before the fit (version 1, these exact lines) still loads: no fixed terms, its message time
// whatever the rows, so it costs every layout linearly in rows as it did.
TEST(CostProfileTest, VersionOneProfilesLoadWithoutFixedTerms) {
  const CostProfile old = parse_cost_profile(
      "sluice_cost_profile 1\nforward_seconds_per_sample 1.8e-3\nbackward_input_seconds_per_sample 1.5e-3\n"
      "backward_weight_seconds_per_sample 9e-4\nmessage_seconds 8.8e-5\nmicrobatch_rows 32\n"
      "measured_with zb-h1 stages 2 chunks 1\n");
  EXPECT_EQ(old.version, 1);
  EXPECT_EQ(old.forward_per_microbatch, 0);
  EXPECT_EQ(old.message_latency, 8.8e-5);
  EXPECT_EQ(old.message_per_row, 0);
  const CostModel one_row = costs_for(old, 4, 1);
  EXPECT_DOUBLE_EQ(one_row.forward, 1.8e-3 / 4);
  EXPECT_DOUBLE_EQ(costs_for(old, 4, 32).backward_input, 1.5e-3 * 8);
  EXPECT_DOUBLE_EQ(one_row.latency, 8.8e-5);
  // Written back, it becomes a version-2 file with the same costs.
  const CostProfile rewritten = parse_cost_profile(to_text(old));
  EXPECT_EQ(rewritten.version, 2);
  EXPECT_DOUBLE_EQ(costs_for(rewritten, 4, 1).latency, one_row.latency);
}

// Version 2: an action pays its stage's share (1 / stages) of the micro-batch's fixed term plus rows x the per-row
// slope; a message its latency plus its rows' time.
TEST(CostProfileTest, FixedTermsArePaidPerMicroBatchAndSplitOverStages) {
  CostProfile profile = profile_from(measured(), 4, 32, "");
  profile.forward_per_microbatch = 1e-4;
  profile.backward_weight_per_microbatch = 5e-5;
  profile.message_latency = 2e-6;
  profile.message_per_row = 1e-7;
  const CostProfile back = parse_cost_profile(to_text(profile));
  for (int stages : {2, 8}) {
    for (double rows : {1.0, 32.0}) {
      const CostModel c = costs_for(back, stages, rows);
      EXPECT_DOUBLE_EQ(c.forward, (1e-4 + back.forward_per_sample * rows) / stages);
      EXPECT_DOUBLE_EQ(c.backward_input, back.backward_input_per_sample * rows / stages);
      EXPECT_DOUBLE_EQ(c.backward_weight, (5e-5 + back.backward_weight_per_sample * rows) / stages);
      EXPECT_DOUBLE_EQ(c.latency, 2e-6 + 1e-7 * rows);
    }
  }
}

std::string refusal(const std::string& text) {
  try {
    parse_cost_profile(text, "p.txt");
  } catch (const Error& e) {
    return e.what();
  }
  return "accepted";
}

TEST(CostProfileTest, MalformedProfilesNameTheProblem) {
  const std::string good =
      "sluice_cost_profile 1\nforward_seconds_per_sample 1e-5\nbackward_input_seconds_per_sample 1e-5\n"
      "backward_weight_seconds_per_sample 5e-6\nmessage_seconds 2e-5\n";
  EXPECT_EQ(refusal(good), "accepted");
  EXPECT_EQ(parse_cost_profile(good + "# a comment\n").microbatch_rows, 1);
  EXPECT_NE(refusal(good + "forward_seconds_per_sample 1\n").find("line 6: duplicate key"), std::string::npos);
  EXPECT_NE(refusal(good + "speed 3\n").find("unknown key 'speed'"), std::string::npos);
  EXPECT_NE(refusal(good + "microbatch_rows 0\n").find("microbatch_rows must be positive"), std::string::npos);
  EXPECT_NE(refusal("sluice_cost_profile 3\n").find("unsupported version"), std::string::npos);
  EXPECT_NE(refusal("forward_seconds_per_sample 1\n").find("missing the 'sluice_cost_profile 2' (or 1) line"),
            std::string::npos);
  // A version-1 file may not carry the fit's keys, and a version-2 file must.
  EXPECT_NE(refusal(good + "forward_seconds_per_microbatch 1e-6\n").find("line 6: forward_seconds_per_microbatch needs "
                                                                       "sluice_cost_profile 2"),
            std::string::npos);
  std::string v2 = good;
  v2.replace(v2.find(" 1\n"), 3, " 2\n");
  EXPECT_NE(refusal(v2).find("missing forward_seconds_per_microbatch"), std::string::npos);
  EXPECT_NE(refusal("sluice_cost_profile 1\nforward_seconds_per_sample -1\n").find("finite number >= 0"),
            std::string::npos);
  EXPECT_NE(refusal("sluice_cost_profile 1\nforward_seconds_per_sample 1\n").find("missing backward_input"),
            std::string::npos);
  EXPECT_NE(refusal("sluice_cost_profile 1\n").find("cost profile p.txt: missing"), std::string::npos);
  EXPECT_THROW(load_cost_profile("/nonexistent/profile.txt"), Error);
}

}  // namespace
}  // namespace schedule
}  // namespace sluice
