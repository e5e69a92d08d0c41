// optimizer.lr_schedule in the config: each type's keys parse into LrScheduleSpec, the horizon defaults to `steps`,
// and mistakes are refused naming the key.
#include <gtest/gtest.h>

#include <string>

#include "core/common/error.h"
#include "core/config/config_parser.h"

namespace sluice::config {
namespace {

std::string config_with(const std::string& schedule, const std::string& steps = "steps: 40\n") {
  return "model:\n  inputs: 4\n  layers:\n    - {type: linear, outputs: 2}\n"
         "optimizer: {type: sgd, lr: 0.1, lr_schedule: " + schedule + "}\n"
         "data: {type: synthetic, batch: 8}\n" + steps;
}

// The message of the kConfig error parsing `yaml` throws ("" when it parses).
std::string config_error(const std::string& yaml) {
  try {
    parse_config(yaml);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kConfig) << e.what();
    return e.what();
  }
  return "";
}

TEST(LrScheduleConfigTest, DefaultsToConstant) {
  const Config cfg = parse_config(config_with("{type: constant}"));
  EXPECT_EQ(cfg.optimizer.lr_schedule.type, LrScheduleType::kConstant);
  EXPECT_EQ(cfg.optimizer.lr_schedule.warmup_steps, 0);
}

TEST(LrScheduleConfigTest, ParsesEachTypesKeys) {
  const LrScheduleSpec step = parse_config(config_with("{type: step, step_size: 5, gamma: 0.5}")).optimizer.lr_schedule;
  EXPECT_EQ(step.type, LrScheduleType::kStep);
  EXPECT_EQ(step.step_size, 5);
  EXPECT_EQ(step.gamma, 0.5);
  const LrScheduleSpec multi =
      parse_config(config_with("{type: multi_step, milestones: [3, 9], gamma: 0.2}")).optimizer.lr_schedule;
  EXPECT_EQ(multi.milestones, (std::vector<int64_t>{3, 9}));
  const LrScheduleSpec poly = parse_config(config_with("{type: polynomial, power: 2, final_lr: 0.001, total_steps: 30}"))
                                  .optimizer.lr_schedule;
  EXPECT_EQ(poly.power, 2.0);
  EXPECT_EQ(poly.final_lr, 0.001);
  EXPECT_EQ(poly.total_steps, 30);
  const LrScheduleSpec warm =
      parse_config(config_with("{type: linear_warmup, warmup_steps: 7, start_factor: 0.5}")).optimizer.lr_schedule;
  EXPECT_EQ(warm.warmup_steps, 7);
  EXPECT_EQ(warm.start_factor, 0.5);
}

TEST(LrScheduleConfigTest, HorizonDefaultsToSteps) {
  const Config cfg = parse_config(config_with("{type: cosine, min_lr: 0.001}", "steps: 25\n"));
  EXPECT_EQ(cfg.optimizer.lr_schedule.total_steps, 25);
  const Config given = parse_config(config_with("{type: cosine, total_steps: 12}", "steps: 25\n"));
  EXPECT_EQ(given.optimizer.lr_schedule.total_steps, 12);
}

TEST(LrScheduleConfigTest, RefusesAScheduleWithoutAHorizonNamingTheKey) {
  const std::string message = config_error(config_with("{type: cosine}", ""));
  EXPECT_NE(message.find("optimizer.lr_schedule"), std::string::npos) << message;
  EXPECT_NE(message.find("total_steps"), std::string::npos) << message;
  EXPECT_NE(config_error(config_with("{type: polynomial}", "")).find("total_steps"), std::string::npos);
}

TEST(LrScheduleConfigTest, RefusesBadValuesNamingTheKey) {
  EXPECT_NE(config_error(config_with("{type: step}")).find("step_size"), std::string::npos);
  EXPECT_NE(config_error(config_with("{type: multi_step, milestones: [5, 3]}")).find("milestones"), std::string::npos);
  EXPECT_NE(config_error(config_with("{type: linear_warmup}")).find("warmup_steps"), std::string::npos);
  EXPECT_NE(config_error(config_with("{type: cosine, gamma: 0.5}")).find("gamma"), std::string::npos);
  EXPECT_NE(config_error(config_with("{type: cosine, warmup_steps: 40}")).find("warmup_steps"), std::string::npos);
  EXPECT_NE(config_error(config_with("{type: exponential}")).find("lr_schedule.type"), std::string::npos);
  EXPECT_NE(config_error(config_with("{type: constant, start_factor: 0.5}")).find("start_factor"), std::string::npos);
}

}  // namespace
}  // namespace sluice::config
