// The `normalization` section: modes and given statistics parse into NormalizationSpec, and every mistake (a list
// of the wrong length, a key that does not apply, an unknown key, a std <= 0) is a kConfig error naming the key.
#include <gtest/gtest.h>

#include <string>

#include "core/common/error.h"
#include "core/config/config_parser.h"

namespace sluice::config {
namespace {

// A model of 3 inputs and 2 outputs with `normalization` set to `section` (a flow map), under `loss`.
std::string config_with(const std::string& section, const std::string& loss = "mse") {
  return "model:\n  inputs: 3\n  layers:\n    - {type: linear, outputs: 5}\n    - {type: relu}\n"
         "    - {type: linear, outputs: 2}\n"
         "loss: " + loss + "\n"
         "data: {type: synthetic, batch: 8}\n"
         "normalization: " + section + "\n";
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

TEST(NormalizationConfigTest, DefaultsToNone) {
  const Config cfg = parse_config("model:\n  inputs: 3\n  layers:\n    - {type: linear, outputs: 2}\n"
                                  "data: {type: synthetic, batch: 8}\n");
  EXPECT_EQ(cfg.normalization.inputs.mode, NormalizationMode::kNone);
  EXPECT_EQ(cfg.normalization.targets.mode, NormalizationMode::kNone);
  EXPECT_FALSE(cfg.normalization.any());
}

TEST(NormalizationConfigTest, ParsesModesAndGivenStatistics) {
  const Config cfg = parse_config(config_with(
      "{inputs: given, inputs_mean: [1, 2.5, -3], inputs_std: [0.5, 2, 10], targets: auto, samples: 64}"));
  const NormalizationSpec& spec = cfg.normalization;
  EXPECT_EQ(spec.inputs.mode, NormalizationMode::kGiven);
  EXPECT_EQ(spec.inputs.mean, (std::vector<double>{1.0, 2.5, -3.0}));
  EXPECT_EQ(spec.inputs.std, (std::vector<double>{0.5, 2.0, 10.0}));
  EXPECT_EQ(spec.targets.mode, NormalizationMode::kAuto);
  EXPECT_EQ(spec.samples, 64);
  EXPECT_EQ(parse_config(config_with("{inputs: auto}")).normalization.samples, 1024);  // the default
}

TEST(NormalizationConfigTest, GivenStatisticsOfTheWrongLengthNameTheKey) {
  const std::string inputs = config_error(config_with("{inputs: given, inputs_mean: [0, 0], inputs_std: [1, 1, 1]}"));
  EXPECT_NE(inputs.find("normalization.inputs_mean"), std::string::npos) << inputs;
  EXPECT_NE(inputs.find("expected 3 entries"), std::string::npos) << inputs;
  EXPECT_NE(inputs.find("line 9"), std::string::npos) << inputs;
  const std::string targets =
      config_error(config_with("{targets: given, targets_mean: [0, 0], targets_std: [1, 1, 1]}"));
  EXPECT_NE(targets.find("normalization.targets_std"), std::string::npos) << targets;
  EXPECT_NE(targets.find("expected 2 entries"), std::string::npos) << targets;
}

TEST(NormalizationConfigTest, RefusesKeysThatDoNotApply) {
  const std::string unknown = config_error(config_with("{inputs: auto, scale: 3}"));
  EXPECT_NE(unknown.find("scale"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("line 9"), std::string::npos) << unknown;
  const std::string missing = config_error(config_with("{inputs: given, inputs_mean: [0, 0, 0]}"));
  EXPECT_NE(missing.find("inputs_std"), std::string::npos) << missing;
  const std::string not_given = config_error(config_with("{inputs: auto, inputs_mean: [0, 0, 0]}"));
  EXPECT_NE(not_given.find("normalization.inputs_mean"), std::string::npos) << not_given;
  EXPECT_NE(not_given.find("only applies with inputs: given"), std::string::npos) << not_given;
  const std::string samples = config_error(config_with("{inputs: given, inputs_mean: [0, 0, 0], "
                                                       "inputs_std: [1, 1, 1], samples: 10}"));
  EXPECT_NE(samples.find("normalization.samples"), std::string::npos) << samples;
  const std::string mode = config_error(config_with("{inputs: standard}"));
  EXPECT_NE(mode.find("normalization.inputs"), std::string::npos) << mode;
  EXPECT_NE(mode.find("none, given, auto"), std::string::npos) << mode;
}

TEST(NormalizationConfigTest, GivenStatisticsMayComeFromAFile) {
  const Config cfg = parse_config(config_with("{inputs: given, targets: given, targets_mean: [1, 2], "
                                              "targets_std: [3, 4], file: stats.h5}"));
  EXPECT_EQ(cfg.normalization.file, "stats.h5");  // read by the trainer at start, not here
  EXPECT_TRUE(cfg.normalization.inputs.mean.empty());
  EXPECT_EQ(cfg.normalization.targets.std, (std::vector<double>{3.0, 4.0}));
  const std::string unused = config_error(config_with("{inputs: auto, file: stats.h5}"));
  EXPECT_NE(unused.find("normalization.file"), std::string::npos) << unused;
  const std::string neither = config_error(config_with("{inputs: given}"));
  EXPECT_NE(neither.find("normalization.file"), std::string::npos) << neither;
  const std::string half = config_error(config_with("{inputs: given, inputs_mean: [0, 0, 0], file: stats.h5}"));
  EXPECT_NE(half.find("both inputs_mean and inputs_std"), std::string::npos) << half;
}

TEST(NormalizationConfigTest, RefusesBadValues) {
  const std::string zero = config_error(config_with("{inputs: given, inputs_mean: [0, 0, 0], inputs_std: [1, 0, 1]}"));
  EXPECT_NE(zero.find("normalization.inputs_std.1"), std::string::npos) << zero;
  EXPECT_NE(zero.find("positive"), std::string::npos) << zero;
  const std::string count = config_error(config_with("{inputs: auto, samples: 0}"));
  EXPECT_NE(count.find("normalization.samples"), std::string::npos) << count;
  const std::string ce = config_error(config_with("{targets: auto}", "cross_entropy"));
  EXPECT_NE(ce.find("normalization.targets"), std::string::npos) << ce;
  EXPECT_NE(ce.find("cross_entropy"), std::string::npos) << ce;
  EXPECT_EQ(config_error(config_with("{inputs: auto}", "cross_entropy")), "");  // inputs alone are fine
}

}  // namespace
}  // namespace sluice::config
