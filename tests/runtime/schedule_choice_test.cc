// `pipeline.schedule: auto` with a measured profile (core/runtime/schedule_choice.h): every candidate is costed
// (a + b x rows) / stages per action from the profile, so where the per-action fixed cost dominates, auto does not pick the
// smallest micro-batches. The expectation is computed here from the cost formula and the simulator, independently
// of the search's own code path.
#include "core/runtime/schedule_choice.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/config/config_parser.h"
#include "core/model/model_shape.h"
#include "core/model/partition.h"
#include "core/model/stage_widths.h"
#include "core/schedule/cost_profile.h"
#include "core/schedule/generators.h"
#include "core/schedule/simulator.h"

namespace sluice::runtime {
namespace {

constexpr int kStages = 2;
constexpr int kBatch = 64;

// 24 identical layers: every chunk count auto tries (1..4 per rank, 2..8 stages) splits them evenly, so each stage
// holds 1/S of the model's per-sample time.
std::string config_text(const std::string& profile) {
  std::string text = "model:\n  inputs: 16\n  layers:\n";
  for (int i = 0; i < 24; ++i) text += "    - {type: linear, outputs: 16}\n";
  return text + "pipeline: {stages: 2, schedule: auto, memory_budget: 1.0e12, costs: " + profile +
         "}\nloss: mse\noptimizer: {type: sgd, lr: 0.1}\ndata: {type: synthetic, batch: 64}\n";
}

schedule::CostProfile profile(double fixed) {
  schedule::CostProfile p;
  p.forward_per_sample = 1e-4;
  p.backward_input_per_sample = 1e-4;
  p.backward_weight_per_sample = 5e-5;
  p.forward_per_microbatch = p.backward_input_per_microbatch = p.backward_weight_per_microbatch = fixed;
  p.message_latency = p.message_seconds = 1e-5;
  p.message_per_row = 1e-7;
  return p;
}

// The step a candidate should simulate to: per action (a + b x rows) / S, full recompute adding F to I.
double expected_makespan(const schedule::CostProfile& p, const schedule::Candidate& c) {
  const double rows = static_cast<double>(kBatch) / c.microbatches;
  const double stages = kStages * c.chunks;
  schedule::CostModel costs;
  costs.forward = (p.forward_per_microbatch + p.forward_per_sample * rows) / stages;
  costs.backward_input = (p.backward_input_per_microbatch + p.backward_input_per_sample * rows) / stages +
                         (c.recompute ? costs.forward : 0.0);
  costs.backward_weight = (p.backward_weight_per_microbatch + p.backward_weight_per_sample * rows) / stages;
  costs.latency = p.message_latency + p.message_per_row * rows;
  return schedule::simulate(schedule::make_schedule(c.schedule, kStages, c.microbatches, c.chunks), costs).makespan;
}

struct Outcome {
  schedule::Candidate chosen;
  schedule::Candidate expected;
};

Outcome choose_with(const std::string& profile_text) {
  const std::string path = ::testing::TempDir() + "/schedule_choice_test_profile.txt";
  std::ofstream(path) << profile_text;
  const config::Config cfg = config::parse_config(config_text(path));
  const ScheduleChoice choice = choose_schedule(cfg, model::model_shape(cfg.model, {}), model::model_shape(cfg.model, {}), 1);
  const schedule::CostProfile p = schedule::parse_cost_profile(profile_text);
  size_t best = 0;
  for (size_t i = 0; i < choice.candidates.size(); ++i) {
    const schedule::Candidate& c = choice.candidates[i];
    const double want = expected_makespan(p, c);
    EXPECT_NEAR(c.makespan, want, 1e-9 * want) << c.schedule << " v=" << c.chunks << " M=" << c.microbatches;
    if (want < expected_makespan(p, choice.candidates[best]) * (1 - 1e-9)) best = i;
  }
  std::remove(path.c_str());
  return {choice.candidates[choice.chosen], choice.candidates[best]};
}

TEST(ScheduleChoiceWithProfile, DominatingPerActionCostKeepsMicroBatchesLarge) {
  const Outcome outcome = choose_with(schedule::to_text(profile(1e-3)));
  EXPECT_EQ(outcome.chosen.schedule, outcome.expected.schedule);
  EXPECT_EQ(outcome.chosen.chunks, outcome.expected.chunks);
  EXPECT_EQ(outcome.chosen.microbatches, outcome.expected.microbatches);
  EXPECT_LT(outcome.chosen.microbatches, kBatch) << "auto picked one-row micro-batches despite the fixed cost";
}

// The same slopes without fixed terms (a version-1 profile, as written before the fit): linear costs, so the most,
// smallest micro-batches simulate fastest, the limit the fit removes.
TEST(ScheduleChoiceWithProfile, VersionOneProfileStillChoosesLinearlyInRows) {
  const Outcome outcome = choose_with(
      "sluice_cost_profile 1\nforward_seconds_per_sample 1e-4\nbackward_input_seconds_per_sample 1e-4\n"
      "backward_weight_seconds_per_sample 5e-5\nmessage_seconds 0\n");
  EXPECT_EQ(outcome.chosen.microbatches, outcome.expected.microbatches);
  EXPECT_EQ(outcome.chosen.microbatches, kBatch);
}

// A skip from the first stage to the last goes straight between them (core/model/skip_routes.h): auto's estimate of
// a middle stage's stash counts only its own main inputs, not the 64-wide skip passing over it.
TEST(ScheduleChoiceWithSkips, AMiddleStageStashesOnlyItsMainInputs) {
  std::string text = "model:\n  inputs: 16\n  layers:\n    - {type: linear, outputs: 64, name: a}\n";
  for (int i = 0; i < 6; ++i) text += "    - {type: linear, outputs: 16}\n";
  text += "    - {type: concat, from: a}\n";  // the last layer: on the last stage
  const config::Config cfg = config::parse_config(
      text + "pipeline: {stages: 4, schedule: auto, memory_budget: 1.0e12}\nloss: mse\n"
             "optimizer: {type: sgd, lr: 0.1}\ndata: {type: synthetic, batch: 8}\n");
  const std::vector<model::LayerShape> shapes = model::model_shape(cfg.model, {});
  const std::vector<schedule::StageSizes> sizes = search_model(cfg, shapes, shapes, 1).stages(1);
  const std::vector<model::LayerRange> ranges =
      model::split_to_ranges(model::choose_model_split(cfg.model, shapes, cfg.pipeline, 4));
  ASSERT_EQ(sizes.size(), 4u);
  ASSERT_EQ(ranges.front().first, 0);
  for (size_t s = 1; s + 1 < ranges.size(); ++s) {
    double main_inputs = 0.0;  // 4 bytes per feature of each layer's own input
    for (int l = ranges[s].first; l < ranges[s].last; ++l) main_inputs += 4.0 * config::features_of(shapes[l].in_shape);
    EXPECT_DOUBLE_EQ(sizes[s].stash_bytes_per_sample, main_inputs) << "stage " << s;
    EXPECT_DOUBLE_EQ(sizes[s].input_bytes_per_sample, 4.0 * config::features_of(shapes[ranges[s].first].in_shape));
  }
}

// pipeline.domain: a rank stashes its block's activations, so a budget between one block's need and the whole
// field's refuses the undecomposed run and accepts the 2 x 2 split (the partition keeps the field's costs).
std::string domain_text(const std::string& domain, const std::string& budget) {
  std::string text = "model:\n  inputs: [2, 16, 16]\n  layers:\n";
  for (int i = 0; i < 4; ++i) text += "    - {type: conv, channels: 4, kernel: 3, padding: periodic}\n";
  return text + "pipeline: {stages: 2, schedule: auto, domain: " + domain + budget +
         "}\nloss: mse\noptimizer: {type: sgd, lr: 0.1}\ndata: {type: synthetic, batch: 4}\n";
}

ScheduleChoice choose_domain(const std::string& domain, const std::string& budget) {
  const config::Config cfg = config::parse_config(domain_text(domain, budget));
  return choose_schedule(cfg, model::model_shape(cfg.model, {}), rank_shapes(cfg, {}), 1);
}

double smallest_need(const ScheduleChoice& choice) {
  double smallest = choice.candidates.at(0).peak_bytes;
  for (const schedule::Candidate& c : choice.candidates) smallest = std::min(smallest, c.peak_bytes);
  return smallest;
}

TEST(ScheduleChoiceOnDomain, BudgetSizesTheStashFromOneBlock) {
  const double field = smallest_need(choose_domain("[1, 1]", ""));
  const double block = smallest_need(choose_domain("[2, 2]", ""));
  ASSERT_LT(block, field) << "the split's stash is sized from the whole field";
  const long long budget = static_cast<long long>((field + block) / 2);
  const std::string setting = ", memory_budget: " + std::to_string(budget);
  try {
    choose_domain("[1, 1]", setting);
    ADD_FAILURE() << "the undecomposed field fits a budget below its smallest need";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kConfig);
    const std::string text = e.what();
    EXPECT_NE(text.find("memory_budget " + std::to_string(budget) + " bytes per rank"), std::string::npos) << text;
    EXPECT_EQ(text.find(".000000"), std::string::npos) << text;
  }
  const ScheduleChoice split = choose_domain("[2, 2]", setting);
  EXPECT_LE(split.candidates[split.chosen].peak_bytes, static_cast<double>(budget));
}

// pipeline.recompute_halos: stash keeps every dropped conv's halo-filled input, so a recompute candidate's stash is
// the stage's input plus those (on an 8 x 8 block, per sample: the first conv 2 · 10 · 10 · 4 = 800 bytes, each
// other 1600), where `exchange` keeps the input alone; a candidate without recompute keeps the same either way. The
// smallest need (a recompute candidate under exchange) grows, and a budget between the two needs accepts exchange
// and refuses stash.
std::string halos_text(const std::string& halos, const std::string& budget) {
  return domain_text("[2, 2]", ", recompute_halos: " + halos + budget);
}

ScheduleChoice choose_halos(const std::string& halos, const std::string& budget) {
  const config::Config cfg = config::parse_config(halos_text(halos, budget));
  return choose_schedule(cfg, model::model_shape(cfg.model, {}), rank_shapes(cfg, {}), 1);
}

TEST(ScheduleChoiceOnDomain, StashedHaloInputsCountUnderRecompute) {
  const ScheduleChoice exchanged = choose_halos("exchange", ""), stashed = choose_halos("stash", "");
  ASSERT_EQ(exchanged.candidates.size(), stashed.candidates.size());
  bool compared = false;
  for (size_t i = 0; i < exchanged.candidates.size(); ++i) {
    const schedule::Candidate& e = exchanged.candidates[i];
    const schedule::Candidate& s = stashed.candidates[i];
    ASSERT_EQ(e.schedule, s.schedule);
    ASSERT_EQ(e.microbatches, s.microbatches);
    if (!e.recompute) {
      EXPECT_EQ(s.peak_bytes, e.peak_bytes) << e.schedule << ": without recompute the setting changes nothing";
      continue;
    }
    EXPECT_GT(s.peak_bytes, e.peak_bytes) << e.schedule << " with recompute";
    compared = true;
  }
  EXPECT_TRUE(compared) << "no recompute candidate";
  const double low = smallest_need(exchanged), high = smallest_need(stashed);
  ASSERT_LT(low, high) << "stash's smallest need counts no halo input";
  const long long budget = static_cast<long long>((low + high) / 2);
  const std::string setting = ", memory_budget: " + std::to_string(budget);
  const ScheduleChoice fits = choose_halos("exchange", setting);
  EXPECT_TRUE(fits.candidates[fits.chosen].recompute);
  EXPECT_LE(fits.candidates[fits.chosen].peak_bytes, static_cast<double>(budget));
  try {
    choose_halos("stash", setting);
    ADD_FAILURE() << "stash fits a budget below its smallest need";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kConfig);
    EXPECT_NE(std::string(e.what()).find("memory_budget " + std::to_string(budget)), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sluice::runtime
