// No float setting of a config takes NaN or infinity, however YAML spells it (.nan, .inf, -.inf, or with the
// explicit !!float tag): each is refused with kConfig naming the key and its line, as ConfigNode::as_double reads
// every number. Range checks alone let some through (`eps: .inf` passes `eps > 0`).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/common/error.h"
#include "tests/config/config_text.h"
#include "core/config/config_parser.h"

namespace sluice::config {
namespace {

const char* const kValid = R"(model:
  inputs: 8
  layers:
    - {type: linear, outputs: 6}
    - {type: layernorm, eps: 1.0e-5}
    - {type: dropout, p: 0.1}
    - {type: linear, outputs: 2}
pipeline: {stages: 2, schedule: 1f1b, microbatches: 2, memory_budget: 1.0e9, bandwidth: 2.0e9, flop_rate: 3.0e10}
optimizer:
  type: adamw
  lr: 1.0e-3
  eps: 1.0e-8
  beta1: 0.9
  beta2: 0.999
  weight_decay: 0.01
  clip_grad_norm: 1.0
  lr_schedule: {type: cosine, total_steps: 10, min_lr: 1.0e-5}
comm: {timeout: 30.0, arrival_timeout: 60.0}
data: {type: synthetic, batch: 8}
seed: 7
steps: 10
)";

using testing::replace;

TEST(NonFiniteConfig, TheValidConfigParses) {
  const Config config = parse_config(kValid, {});
  EXPECT_EQ(config.pipeline.bandwidth, 2.0e9);
  EXPECT_EQ(config.pipeline.flop_rate, 3.0e10);
}

// The partition's link bandwidth and compute rate divide: zero and negative values are refused naming the key.
TEST(NonFiniteConfig, PartitionRatesMustBePositive) {
  for (const std::string key : {"bandwidth", "flop_rate"}) {
    for (const std::string value : {"0", "-1.0e9"}) {
      try {
        parse_config(kValid, {"pipeline." + key + "=" + value});
        ADD_FAILURE() << key << " = " << value << " was accepted";
      } catch (const Error& error) {
        EXPECT_EQ(error.code(), ErrorCode::kConfig) << error.what();
        EXPECT_NE(std::string(error.what()).find("pipeline." + key), std::string::npos) << error.what();
        EXPECT_NE(std::string(error.what()).find("per second > 0"), std::string::npos) << error.what();
      }
    }
  }
}

TEST(NonFiniteConfig, EveryFloatKeyRefusesNanAndInfinityInEverySpelling) {
  // (text to replace in kValid with "<value>" where the number was, the key the message names)
  const std::vector<std::pair<std::string, std::string>> keys = {
      {"eps: 1.0e-5", "model.layers.1.eps"},
      {"p: 0.1", "model.layers.2.p"},
      {"memory_budget: 1.0e9", "pipeline.memory_budget"},
      {"bandwidth: 2.0e9", "pipeline.bandwidth"},
      {"flop_rate: 3.0e10", "pipeline.flop_rate"},
      {"lr: 1.0e-3", "optimizer.lr"},
      {"eps: 1.0e-8", "optimizer.eps"},
      {"beta1: 0.9", "optimizer.beta1"},
      {"beta2: 0.999", "optimizer.beta2"},
      {"weight_decay: 0.01", "optimizer.weight_decay"},
      {"clip_grad_norm: 1.0", "optimizer.clip_grad_norm"},
      {"min_lr: 1.0e-5", "optimizer.lr_schedule.min_lr"},
      {"timeout: 30.0", "comm.timeout"},
      {"arrival_timeout: 60.0", "comm.arrival_timeout"},
  };
  for (const auto& [setting, key] : keys) {
    const std::string name = setting.substr(0, setting.find(':'));
    for (const std::string value : {".nan", ".NaN", ".inf", "-.inf", "+.inf", "!!float .nan", "!!float .inf"}) {
      const std::string text = replace(kValid, setting, name + ": " + value);
      try {
        parse_config(text, {});
        ADD_FAILURE() << key << ": " << value << " was accepted";
      } catch (const Error& error) {
        EXPECT_EQ(error.code(), ErrorCode::kConfig) << error.what();
        EXPECT_NE(std::string(error.what()).find(key + " (line"), std::string::npos) << value << ": " << error.what();
      }
    }
  }
}

// data.replay.capacity is a sample count: a float, NaN or infinity is refused naming it.
TEST(NonFiniteConfig, ReplayCapacityRefusesNonIntegers) {
  for (const std::string value : {".nan", ".inf", "!!float .inf", "1.5", "1.0e3"}) {
    const std::string text =
        replace(kValid, "data: {type: synthetic, batch: 8}", "data: {type: external, batch: 8, replay: {capacity: " +
                                                               value + "}}");
    try {
      parse_config(text, {});
      ADD_FAILURE() << "capacity " << value << " was accepted";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::kConfig) << error.what();
      EXPECT_NE(std::string(error.what()).find("data.replay.capacity"), std::string::npos) << error.what();
    }
  }
}

// The same through a command-line override (`sluice train -o optimizer.lr=.nan`).
TEST(NonFiniteConfig, OverridesRefuseNanAndInfinityToo) {
  for (const std::string value : {".nan", ".inf", "-.inf"}) {
    for (const std::string key : {"optimizer.lr", "model.layers.1.eps", "comm.timeout"}) {
      try {
        parse_config(kValid, {key + "=" + value});
        ADD_FAILURE() << key << "=" << value << " was accepted";
      } catch (const Error& error) {
        EXPECT_EQ(error.code(), ErrorCode::kConfig) << error.what();
        EXPECT_NE(std::string(error.what()).find(key), std::string::npos) << error.what();
      }
    }
  }
}

}  // namespace
}  // namespace sluice::config
