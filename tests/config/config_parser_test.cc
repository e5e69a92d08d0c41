#include "core/config/config_parser.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "core/common/error.h"

namespace sluice::config {
namespace {

// A valid config; each error test breaks one thing in it. Line numbers below refer to this text.
const char* const kValid = R"(model:
  inputs: 32
  layers:
    - {type: linear, outputs: 64}
    - {type: gelu}
    - {type: dropout, p: 0.1}
    - {type: residual_mlp, hidden: 128}
    - {type: linear, outputs: 8, bias: false}
pipeline:
  stages: 4
  schedule: 1f1b
  microbatches: 8
loss: mse
optimizer: {type: adamw, lr: 1.0e-3}
data: {type: synthetic, batch: 64}
seed: 7
steps: 10
)";

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "test setup: \"" << from << "\" not in the text";
  return text.replace(at, from.size(), to);
}

// The kConfig message of parsing `text`, or a test failure if it parses.
std::string config_error(const std::string& text, const std::vector<std::string>& overrides = {}) {
  try {
    parse_config(text, overrides);
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kConfig) << error.what();
    return error.what();
  }
  ADD_FAILURE() << "expected a config error for:\n" << text;
  return "";
}

TEST(ConfigParser, ReadsEveryFieldOfAValidConfig) {
  const Config config = parse_config(kValid);
  EXPECT_EQ(config.model.inputs, 32);
  ASSERT_EQ(config.model.layers.size(), 5u);
  EXPECT_EQ(config.model.layers[0].type, "linear");
  EXPECT_EQ(config.model.layers[0].outputs, 64);
  EXPECT_TRUE(config.model.layers[0].bias);
  EXPECT_EQ(config.model.layers[0].line, 4);
  EXPECT_EQ(config.model.layers[2].type, "dropout");
  EXPECT_DOUBLE_EQ(config.model.layers[2].p, 0.1);
  EXPECT_EQ(config.model.layers[3].hidden, 128);
  EXPECT_EQ(config.model.layers[3].activation, "gelu");  // the documented default
  EXPECT_FALSE(config.model.layers[4].bias);
  EXPECT_EQ(config.pipeline.stages, 4);
  EXPECT_EQ(config.pipeline.schedule, "1f1b");
  EXPECT_EQ(config.pipeline.microbatches, 8);
  EXPECT_EQ(config.optimizer.type, "adamw");
  EXPECT_DOUBLE_EQ(config.optimizer.lr, 1.0e-3);
  EXPECT_EQ(config.data.type, "synthetic");
  EXPECT_EQ(config.data.batch, 64);
  EXPECT_EQ(config.seed, 7u);
  EXPECT_EQ(config.steps, 10);
  EXPECT_EQ(config.text, kValid);
}

TEST(ConfigParser, ReadsTheReadmeExampleFile) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  const std::string path =
      (srcdir && workspace ? std::string(srcdir) + "/" + workspace + "/" : std::string()) + "examples/configs/mlp.yaml";
  const Config config = parse_config(path);
  ASSERT_EQ(config.model.layers.size(), 8u);
  EXPECT_EQ(config.model.layers[5].type, "layernorm");
  EXPECT_EQ(config.model.layers[6].type, "residual_mlp");
  EXPECT_EQ(config.model.layers[7].outputs, 8);
  EXPECT_EQ(config.pipeline.stages, 4);
  EXPECT_EQ(config.checkpoint.keep, 3);
  std::ifstream file(path);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_EQ(config.text, text);
}

TEST(ConfigParser, CustomLayerKeepsItsRegisteredName) {
  const Config config = parse_config(replace(kValid, "- {type: gelu}", "- {type: custom, name: foo}"));
  EXPECT_EQ(config.model.layers[1].type, "custom");
  EXPECT_EQ(config.model.layers[1].name, "foo");
}

TEST(ConfigParser, WrongScalarTypeNamesKeyLineAndValue) {
  EXPECT_EQ(config_error(replace(kValid, "stages: 4", "stages: four")),
            "config: pipeline.stages (line 10): expected an integer, got \"four\"");
  EXPECT_EQ(config_error(replace(kValid, "stages: 4", "stages: 0")),
            "config: pipeline.stages (line 10): expected a positive integer, got \"0\"");
}

TEST(ConfigParser, UnknownKeyIsNamedWithTheAllowedOnes) {
  const std::string message = config_error(replace(kValid, "schedule: 1f1b", "shedule: 1f1b"));
  EXPECT_NE(message.find("pipeline.shedule (line 11): unknown key \"shedule\""), std::string::npos) << message;
  EXPECT_NE(message.find("allowed keys: stages, schedule,"), std::string::npos) << message;

  const std::string top = config_error(std::string(kValid) + "stpes: 3\n");
  EXPECT_NE(top.find("stpes (line 18): unknown key"), std::string::npos) << top;

  const std::string layer = config_error(replace(kValid, "{type: gelu}", "{type: gelu, outputs: 3}"));
  EXPECT_NE(layer.find("model.layers.1.outputs (line 5): unknown key \"outputs\" in a gelu layer"), std::string::npos)
      << layer;
}

TEST(ConfigParser, RejectsInvalidChoices) {
  const std::string schedule = config_error(replace(kValid, "schedule: 1f1b", "schedule: 2f2b"));
  EXPECT_NE(schedule.find("pipeline.schedule (line 11): expected one of gpipe, 1f1b, interleaved, zb-h1, zb-v"),
            std::string::npos)
      << schedule;
  EXPECT_NE(config_error(replace(kValid, "loss: mse", "loss: l1")).find("loss (line 13)"), std::string::npos);
  EXPECT_NE(config_error(replace(kValid, "type: adamw", "type: adam")).find("optimizer.type (line 14)"),
            std::string::npos);
  EXPECT_NE(config_error(replace(kValid, "type: synthetic", "type: csv")).find("data.type (line 15)"),
            std::string::npos);
  EXPECT_NE(config_error(replace(kValid, "{type: gelu}", "{type: swish}")).find("model.layers.1.type (line 5)"),
            std::string::npos);
}

TEST(ConfigParser, ReadsTransportAndGemmPrecisionWithDefaults) {
  const Config defaults = parse_config(kValid);
  EXPECT_EQ(defaults.pipeline.transport, "auto");
  EXPECT_EQ(defaults.gemm_precision, "fp32");
  const Config gpu = parse_config(kValid, {"device=cuda", "pipeline.transport=nccl", "gemm_precision=bf16"});
  EXPECT_EQ(gpu.device, "cuda");
  EXPECT_EQ(gpu.pipeline.transport, "nccl");
  EXPECT_EQ(gpu.gemm_precision, "bf16");
  // staged works on the CPU too (host -> host copies): it is how the staging path is tested without a GPU.
  EXPECT_EQ(parse_config(kValid, {"pipeline.transport=staged"}).pipeline.transport, "staged");
  const std::string bad = config_error(replace(kValid, "microbatches: 8", "microbatches: 8\n  transport: gloo"));
  EXPECT_NE(bad.find("pipeline.transport (line 13): expected one of auto, mpi, staged, nccl"), std::string::npos)
      << bad;
}

TEST(ConfigParser, GpuOnlyKeysOnTheCpuNameBothKeys) {
  const std::string nccl = config_error(replace(kValid, "microbatches: 8", "microbatches: 8\n  transport: nccl"));
  EXPECT_NE(nccl.find("pipeline.transport (line 13): transport: nccl moves device memory and needs device: cuda"),
            std::string::npos)
      << nccl;
  const std::string bf16 = config_error(kValid, {"gemm_precision=bf16"});
  EXPECT_NE(bf16.find("gemm_precision: bf16 needs device: cuda"), std::string::npos) << bf16;
  EXPECT_NE(bf16.find("gemm_precision (from --set gemm_precision=bf16)"), std::string::npos) << bf16;
  const std::string tf32 = config_error(kValid, {"gemm_precision=tf32"});
  EXPECT_NE(tf32.find("the CPU backend computes GEMMs in fp32"), std::string::npos) << tf32;
}

TEST(ConfigParser, RejectsOutOfRangeValues) {
  EXPECT_NE(config_error(replace(kValid, "lr: 1.0e-3", "lr: 0")).find("optimizer.lr (line 14): expected a positive"),
            std::string::npos);
  EXPECT_NE(config_error(replace(kValid, "p: 0.1", "p: 1.0")).find("model.layers.2.p (line 6): dropout probability"),
            std::string::npos);
  EXPECT_NE(config_error(replace(kValid, "outputs: 64", "outputs: -2")).find("model.layers.0.outputs (line 4)"),
            std::string::npos);
  EXPECT_NE(config_error(replace(kValid, "microbatches: 8", "microbatches: 0")).find("pipeline.microbatches (line 12)"),
            std::string::npos);
  EXPECT_NE(config_error(replace(kValid, "batch: 64", "batch: -1")).find("data.batch (line 15)"), std::string::npos);
}

TEST(ConfigParser, MissingRequiredFieldsAreNamed) {
  EXPECT_NE(config_error(replace(kValid, "{type: linear, outputs: 64}", "{type: linear}"))
                .find("model.layers.0 (line 4): missing required key \"outputs\""),
            std::string::npos);
  EXPECT_NE(config_error(replace(kValid, "type: synthetic", "type: hdf5")).find("missing required key \"path\""),
            std::string::npos);
  EXPECT_NE(
      config_error(replace(kValid, "data: {type: synthetic, batch: 64}\n", "")).find("missing required key \"data\""),
      std::string::npos);
  const std::string no_layers = config_error(replace(replace(kValid, "  layers:\n", "  layers: []\n"),
                                                     "    - {type: linear, outputs: 64}\n    - {type: gelu}\n"
                                                     "    - {type: dropout, p: 0.1}\n"
                                                     "    - {type: residual_mlp, hidden: 128}\n"
                                                     "    - {type: linear, outputs: 8, bias: false}\n",
                                                     ""));
  EXPECT_NE(no_layers.find("model.layers (line 3): the model needs at least one layer"), std::string::npos)
      << no_layers;
}

TEST(ConfigParser, SelectiveRecomputeNeedsLayersInRange) {
  const std::string selective = replace(kValid, "microbatches: 8", "microbatches: 8\n  recompute: selective");
  EXPECT_NE(config_error(selective).find("pipeline (line 10): recompute: selective needs recompute_layers"),
            std::string::npos);
  const Config config = parse_config(selective + "", {"pipeline.recompute_layers=[0, 4]"});
  EXPECT_EQ(config.pipeline.recompute_layers, (std::vector<int>{0, 4}));
  EXPECT_NE(config_error(selective, {"pipeline.recompute_layers=[5]"}).find("layer index 5 is out of range"),
            std::string::npos);
}

TEST(ConfigParser, SplitMustCoverStagesTimesChunksAndAllLayers) {
  const Config config = parse_config(kValid, {"pipeline.split=[2, 1, 1, 1]"});
  EXPECT_EQ(config.pipeline.split, (std::vector<int>{2, 1, 1, 1}));
  EXPECT_NE(config_error(kValid, {"pipeline.split=[2, 3]"}).find("expected stages * chunks = 4 * 1 = 4 entries, got 2"),
            std::string::npos);
  EXPECT_NE(config_error(kValid, {"pipeline.split=[1, 1, 1, 1]"}).find("add up to 4 layers but the model has 5"),
            std::string::npos);
}

TEST(ConfigParser, SyntaxErrorGivesTheLine) {
  const std::string message = config_error(replace(kValid, "loss: mse", "loss: mse: l1"));
  EXPECT_NE(message.find("config: YAML syntax error at line 13, column 10: illegal map value"), std::string::npos)
      << message;
}

TEST(ConfigParser, MissingFileIsNamed) {
  EXPECT_EQ(config_error("configs/does_not_exist.yaml"),
            "config: config file \"configs/does_not_exist.yaml\" does not exist");
}

TEST(ConfigOverrides, ReplaceScalarsWalkSequencesAndParseValuesAsYaml) {
  const Config config = parse_config(kValid, {"model.layers.4.outputs=128", "pipeline.schedule=zb-v",
                                              "optimizer.lr=0.01", "pipeline.split=[1,1,1,2]"});
  EXPECT_EQ(config.model.layers[4].outputs, 128);
  EXPECT_EQ(config.pipeline.schedule, "zb-v");
  EXPECT_DOUBLE_EQ(config.optimizer.lr, 0.01);
  EXPECT_EQ(config.pipeline.split, (std::vector<int>{1, 1, 1, 2}));
  // Config::text is the overridden document: parsing it again gives the same values.
  const Config reparsed = parse_config(config.text);
  EXPECT_EQ(reparsed.model.layers[4].outputs, 128);
  EXPECT_EQ(reparsed.pipeline.schedule, "zb-v");
  EXPECT_DOUBLE_EQ(reparsed.optimizer.lr, 0.01);
}

TEST(ConfigOverrides, CreateMissingKeysAndSections) {
  const Config config = parse_config(kValid, {"checkpoint.dir=/tmp/ckpt", "checkpoint.every=5", "pipeline.chunks=2",
                                              "model.layers.1={type: custom, name: foo}"});
  EXPECT_EQ(config.checkpoint.dir, "/tmp/ckpt");
  EXPECT_EQ(config.checkpoint.every, 5);
  EXPECT_EQ(config.pipeline.chunks, 2);
  EXPECT_EQ(config.model.layers[1].type, "custom");
  EXPECT_EQ(config.model.layers[1].name, "foo");
}

TEST(ConfigOverrides, BadPathsNameTheOverride) {
  EXPECT_EQ(
      config_error(kValid, {"model.layers.9.outputs=3"}),
      "config: --set model.layers.9.outputs=3: index 9 is out of range: model.layers has 5 entries (indices 0..4)");
  EXPECT_NE(config_error(kValid, {"model.layers.first.outputs=3"}).find("--set model.layers.first.outputs=3"),
            std::string::npos);
  EXPECT_EQ(config_error(kValid, {"loss.kind=mse"}),
            "config: --set loss.kind=mse: loss is a scalar (\"mse\"), it has no key \"kind\"");
  EXPECT_NE(config_error(kValid, {"pipeline.stages"}).find("expected key.path=value"), std::string::npos);
  EXPECT_NE(config_error(kValid, {"pipeline..stages=2"}).find("empty key"), std::string::npos);
}

TEST(ConfigOverrides, InvalidOverriddenValuesPointAtTheOverride) {
  EXPECT_EQ(config_error(kValid, {"pipeline.stages=four"}),
            "config: pipeline.stages (from --set pipeline.stages=four): expected an integer, got \"four\"");
  const std::string typo = config_error(kValid, {"pipeline.shedule=zb-v"});
  EXPECT_NE(typo.find("pipeline.shedule (from --set pipeline.shedule=zb-v): unknown key"), std::string::npos) << typo;
}

}  // namespace
}  // namespace sluice::config
