#include "core/config/config_parser.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "tests/config/config_text.h"

namespace sluice::config {
namespace {

constexpr DeviceKind kCpu = DeviceKind::kCpu;
constexpr DeviceKind kCuda = DeviceKind::kCuda;

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

using testing::replace;

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
  EXPECT_EQ(config.model.layers[0].type, LayerType::kLinear);
  EXPECT_EQ(config.model.layers[0].outputs, 64);
  EXPECT_TRUE(config.model.layers[0].bias);
  EXPECT_EQ(config.model.layers[0].line, 4);
  EXPECT_EQ(config.model.layers[2].type, LayerType::kDropout);
  EXPECT_DOUBLE_EQ(config.model.layers[2].p, 0.1);
  EXPECT_EQ(config.model.layers[3].hidden, 128);
  EXPECT_EQ(config.model.layers[3].activation, kernels::Activation::kGelu);  // the documented default
  EXPECT_FALSE(config.model.layers[4].bias);
  EXPECT_EQ(config.pipeline.stages, 4);
  EXPECT_EQ(config.pipeline.schedule, schedule::ScheduleKind::kOneFOneB);
  EXPECT_EQ(config.pipeline.microbatches, 8);
  EXPECT_EQ(config.optimizer.type, OptimizerType::kAdamW);
  EXPECT_DOUBLE_EQ(config.optimizer.lr, 1.0e-3);
  EXPECT_EQ(config.data.type, DataType::kSynthetic);
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
  EXPECT_EQ(config.model.layers[5].type, LayerType::kLayerNorm);
  EXPECT_EQ(config.model.layers[6].type, LayerType::kResidualMlp);
  EXPECT_EQ(config.model.layers[7].outputs, 8);
  EXPECT_EQ(config.pipeline.stages, 4);
  EXPECT_EQ(config.checkpoint.keep, 3);
  std::ifstream file(path);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_EQ(config.text, text);
}

TEST(ConfigParser, CustomLayerKeepsItsRegisteredName) {
  const Config config = parse_config(replace(kValid, "- {type: gelu}", "- {type: custom, name: foo}"));
  EXPECT_EQ(config.model.layers[1].type, LayerType::kCustom);
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

TEST(ConfigParser, ReadsTransportAndPrecisionWithDefaults) {
  const Config defaults = parse_config(kValid);
  EXPECT_EQ(defaults.pipeline.transport, TransportKind::kAuto);
  EXPECT_EQ(defaults.gemm_precision, GemmPrecision::kFp32);
  const Config gpu = parse_config(kValid, {"device=cuda", "pipeline.transport=nccl", "gemm_precision=bf16"});
  EXPECT_EQ(gpu.devices, (std::vector<DeviceKind>{kCuda}));
  EXPECT_EQ(gpu.pipeline.transport, TransportKind::kNccl);
  EXPECT_EQ(gpu.gemm_precision, GemmPrecision::kBf16);
  // staged works on the CPU too (host -> host copies): it is how the staging path is tested without a GPU.
  EXPECT_EQ(parse_config(kValid, {"pipeline.transport=staged"}).pipeline.transport, TransportKind::kStaged);
  const std::string bad = config_error(replace(kValid, "microbatches: 8", "microbatches: 8\n  transport: gloo"));
  EXPECT_NE(bad.find("pipeline.transport (line 13): expected one of auto, mpi, staged, nccl"), std::string::npos)
      << bad;
}

TEST(ConfigParser, ReadsGradientSumWithItsDefaultAndRefusesNcclOnCpuStages) {
  EXPECT_EQ(parse_config(kValid).pipeline.gradient_sum, GradientSumKind::kAuto);
  EXPECT_EQ(parse_config(kValid, {"pipeline.gradient_sum=ordered"}).pipeline.gradient_sum, GradientSumKind::kOrdered);
  EXPECT_EQ(parse_config(kValid, {"device=cuda", "pipeline.gradient_sum=nccl"}).pipeline.gradient_sum,
            GradientSumKind::kNccl);
  const std::string bad = config_error(replace(kValid, "microbatches: 8", "microbatches: 8\n  gradient_sum: fast"));
  EXPECT_NE(bad.find("pipeline.gradient_sum (line 13): expected one of auto, ordered, nccl"), std::string::npos)
      << bad;
  const std::string cpu = config_error(kValid, {"device=[cuda, cuda, cpu, cpu]", "pipeline.gradient_sum=nccl"});
  EXPECT_NE(cpu.find("gradient_sum: nccl sums device memory and needs device: cuda on every stage (device is cpu on "
                     "stages 2, 3)"),
            std::string::npos)
      << cpu;
}

TEST(ConfigParser, GpuOnlyKeysOnTheCpuNameBothKeys) {
  const std::string nccl = config_error(replace(kValid, "microbatches: 8", "microbatches: 8\n  transport: nccl"));
  EXPECT_NE(nccl.find("pipeline.transport (line 13): transport: nccl moves device memory and needs device: cuda"),
            std::string::npos)
      << nccl;
  // tf32 has no CPU mode; the message names the key as the config spells it.
  const std::string tf32 = config_error(kValid, {"precision=tf32"});
  EXPECT_NE(tf32.find("precision (from --set precision=tf32): precision: tf32 needs device: cuda"), std::string::npos)
      << tf32;
  EXPECT_NE(tf32.find("the CPU backend has no TF32 mode"), std::string::npos) << tf32;
  const std::string alias = config_error(kValid, {"gemm_precision=tf32"});
  EXPECT_NE(alias.find("gemm_precision (from --set gemm_precision=tf32): gemm_precision: tf32 needs device: cuda"),
            std::string::npos)
      << alias;
  // bf16 on the CPU parses: whether this CPU has avx512_bf16 is the backend's check when it starts.
  EXPECT_EQ(parse_config(kValid, {"precision=bf16"}).gemm_precision_for_stage(0), GemmPrecision::kBf16);
}

// `precision` is the setting; `gemm_precision` (its name before) is an alias with the same meaning; both at once
// is an error naming both and where each is.
TEST(ConfigParser, PrecisionAndItsAliasGemmPrecision) {
  EXPECT_EQ(parse_config(kValid).gemm_precision, GemmPrecision::kFp32);
  for (const char* key : {"precision", "gemm_precision"}) {
    for (const char* name : {"fp32", "bf16"}) {
      const Config config = parse_config(kValid + std::string(key) + ": " + name + "\n");
      EXPECT_EQ(gemm_precisions().name_of(config.gemm_precision), std::string(name)) << key;
    }
    EXPECT_EQ(parse_config(kValid, {"device=cuda", std::string(key) + "=tf32"}).gemm_precision, GemmPrecision::kTf32);
  }
  EXPECT_EQ(config_error(kValid + std::string("precision: bf16\ngemm_precision: bf16\n")),
            "config: precision (line 18): precision and gemm_precision (line 19) are one setting (gemm_precision is "
            "its old name): give only precision");
  const std::string overridden = config_error(kValid + std::string("precision: fp32\n"), {"gemm_precision=fp32"});
  EXPECT_EQ(overridden, "config: precision (line 18): precision and gemm_precision (from --set gemm_precision=fp32) "
                        "are one setting (gemm_precision is its old name): give only precision");
  const std::string bad = config_error(kValid + std::string("precision: fp16\n"));
  EXPECT_NE(bad.find("config: precision (line 18): expected one of fp32, tf32, bf16"), std::string::npos) << bad;
  EXPECT_NE(bad.find("fp16"), std::string::npos) << bad;
  const std::string bad_alias = config_error(kValid, {"gemm_precision=BF16"});
  EXPECT_NE(bad_alias.find("config: gemm_precision (from --set gemm_precision=BF16): expected one of fp32, tf32, bf16"),
            std::string::npos)
      << bad_alias;
}

// `device` is one device for every stage or a list with one per pipeline stage (kValid has 4 stages; a
// `device:` line appended to it is line 18).
TEST(ConfigDevice, OneDeviceMeansEveryStage) {
  const Config defaults = parse_config(kValid);
  EXPECT_EQ(defaults.devices, (std::vector<DeviceKind>{kCpu}));
  const Config gpu = parse_config(kValid + std::string("device: cuda\n"));
  for (int stage = 0; stage < 4; ++stage) EXPECT_EQ(gpu.device_for_stage(stage), kCuda) << stage;
  EXPECT_TRUE(gpu.any_stage_on(DeviceKind::kCuda));
  EXPECT_FALSE(gpu.any_stage_on(DeviceKind::kCpu));
}

TEST(ConfigDevice, AListGivesEachStageItsDevice) {
  const Config flow = parse_config(kValid + std::string("device: [cuda, cuda, cuda, cpu]\n"));
  EXPECT_EQ(flow.devices, (std::vector<DeviceKind>{kCuda, kCuda, kCuda, kCpu}));
  EXPECT_EQ(flow.device_for_stage(2), DeviceKind::kCuda);
  EXPECT_EQ(flow.device_for_stage(3), DeviceKind::kCpu);
  EXPECT_TRUE(flow.any_stage_on(DeviceKind::kCuda));
  EXPECT_TRUE(flow.any_stage_on(DeviceKind::kCpu));
  const Config block = parse_config(kValid + std::string("device:\n  - cpu\n  - cuda\n  - cpu\n  - cpu\n"));
  EXPECT_EQ(block.devices, (std::vector<DeviceKind>{kCpu, kCuda, kCpu, kCpu}));
}

TEST(ConfigDevice, ListsCanBeSetFromTheCommandLine) {
  const Config whole = parse_config(kValid, {"device=[cpu, cpu, cuda, cuda]"});
  EXPECT_EQ(whole.devices, (std::vector<DeviceKind>{kCpu, kCpu, kCuda, kCuda}));
  // The overridden document keeps the list (checkpoints store it).
  EXPECT_EQ(parse_config(whole.text).devices, whole.devices);
  // One entry of a list in the file.
  const Config entry = parse_config(kValid + std::string("device: [cpu, cpu, cpu, cpu]\n"), {"device.1=cuda"});
  EXPECT_EQ(entry.devices, (std::vector<DeviceKind>{kCpu, kCuda, kCpu, kCpu}));
  // A scalar replaces the file's list; a new stage count and its list go together.
  EXPECT_EQ(parse_config(kValid + std::string("device: [cpu, cpu, cpu, cuda]\n"), {"device=cpu"}).devices,
            (std::vector<DeviceKind>{kCpu}));
  EXPECT_EQ(parse_config(kValid, {"pipeline.stages=2", "device=[cuda, cpu]"}).devices,
            (std::vector<DeviceKind>{kCuda, kCpu}));
}

TEST(ConfigDevice, AListOfTheWrongLengthNamesKeyLineAndStageCount) {
  EXPECT_EQ(config_error(kValid + std::string("device: [cuda, cuda, cpu]\n")),
            "config: device (line 18): expected one device per stage (4), got 3; or write one device for all stages "
            "(device: cpu)");
  EXPECT_NE(config_error(kValid + std::string("device: []\n")).find("device (line 18): expected one device per "
                                                                     "stage (4), got 0"),
            std::string::npos);
  const std::string set = config_error(kValid, {"device=[cuda, cpu]"});
  EXPECT_NE(set.find("config: device (from --set device=[cuda, cpu]): expected one device per stage (4), got 2"),
            std::string::npos)
      << set;
  // The count follows pipeline.stages, overridden or not.
  EXPECT_NE(config_error(kValid + std::string("device: [cpu, cpu, cpu, cpu]\n"), {"pipeline.stages=2"})
                .find("expected one device per stage (2), got 4"),
            std::string::npos);
}

TEST(ConfigDevice, BadEntriesNameTheirIndexAndLine) {
  EXPECT_EQ(config_error(kValid + std::string("device: [cpu, gpu, cpu, cpu]\n")),
            "config: device.1 (line 18): expected one of cpu, cuda, got \"gpu\"");
  EXPECT_EQ(config_error(kValid + std::string("device: [cpu, cpu, cpu, {type: cuda}]\n")),
            "config: device.3 (line 18): expected one of cpu, cuda, got a map");
  EXPECT_EQ(config_error(kValid + std::string("device: [cpu, [cuda], cpu, cpu]\n")),
            "config: device.1 (line 18): expected one of cpu, cuda, got a sequence");
  EXPECT_EQ(config_error(kValid + std::string("device: [cpu, cpu, 1, cpu]\n")),
            "config: device.2 (line 18): expected one of cpu, cuda, got \"1\"");
  EXPECT_EQ(config_error(kValid + std::string("device: [cpu, ~, cpu, cpu]\n")),
            "config: device.1 (line 18): expected one of cpu, cuda, got nothing");
  const std::string block = config_error(kValid + std::string("device:\n  - cpu\n  - cpu\n  - tpu\n  - cpu\n"));
  EXPECT_EQ(block, "config: device.2 (line 21): expected one of cpu, cuda, got \"tpu\"");
  EXPECT_EQ(config_error(kValid + std::string("device: {stage0: cuda}\n")),
            "config: device (line 18): expected one of cpu, cuda, got a map");
  // An entry can only be overridden in a list the file has.
  EXPECT_EQ(config_error(kValid + std::string("device: cpu\n"), {"device.2=cuda"}),
            "config: --set device.2=cuda: device is a scalar (\"cpu\"), it has no key \"2\"");
  EXPECT_EQ(config_error(kValid, {"device.2=cuda"}),
            "config: device (from --set device.2=cuda): expected one of cpu, cuda, got a map");
}

TEST(ConfigDevice, Tf32NeedsOneCudaStageAndBf16AppliesToEveryStage) {
  const Config mixed = parse_config(kValid + std::string("device: [cuda, cpu, cpu, cuda]\nprecision: bf16\n"));
  EXPECT_EQ(mixed.gemm_precision, GemmPrecision::kBf16);
  // bf16 on every stage (the cpu ones through oneDNN): the trainer sets each rank's backend from
  // gemm_precision_for_stage.
  for (int stage = 0; stage < 4; ++stage) EXPECT_EQ(mixed.gemm_precision_for_stage(stage), GemmPrecision::kBf16);
  // tf32 for the cuda stages only: the CPU has no TF32 mode.
  const Config tf32 = parse_config(kValid + std::string("device: [cuda, cpu, cpu, cuda]\nprecision: tf32\n"));
  EXPECT_EQ(tf32.gemm_precision_for_stage(0), GemmPrecision::kTf32);
  EXPECT_EQ(tf32.gemm_precision_for_stage(1), GemmPrecision::kFp32);
  EXPECT_EQ(tf32.gemm_precision_for_stage(2), GemmPrecision::kFp32);
  EXPECT_EQ(tf32.gemm_precision_for_stage(3), GemmPrecision::kTf32);
  EXPECT_EQ(parse_config(kValid, {"device=cuda", "gemm_precision=tf32"}).gemm_precision_for_stage(2),
            GemmPrecision::kTf32);
  EXPECT_EQ(parse_config(kValid).gemm_precision_for_stage(0), GemmPrecision::kFp32);
  EXPECT_EQ(parse_config(kValid, {"device=[cpu, cpu, cpu, cuda]", "gemm_precision=tf32"}).gemm_precision,
            GemmPrecision::kTf32);
  const std::string all_cpu =
      config_error(kValid + std::string("device: [cpu, cpu, cpu, cpu]\ngemm_precision: tf32\n"));
  EXPECT_EQ(all_cpu,
            "config: gemm_precision (line 19): gemm_precision: tf32 needs device: cuda on at least one stage; the CPU "
            "backend has no TF32 mode (device is \"cpu\" on every stage; use fp32, or bf16 where the CPU has "
            "avx512_bf16)");
}

TEST(ConfigDevice, NcclNeedsCudaOnEveryStageAndNamesTheCpuStages) {
  EXPECT_EQ(parse_config(kValid, {"device=[cuda, cuda, cuda, cuda]", "pipeline.transport=nccl"}).pipeline.transport,
            TransportKind::kNccl);
  const std::string mixed = config_error(replace(kValid, "microbatches: 8", "microbatches: 8\n  transport: nccl") +
                                         "device: [cuda, cpu, cuda, cpu]\n");
  EXPECT_EQ(mixed,
            "config: pipeline.transport (line 13): transport: nccl moves device memory and needs device: cuda on every "
            "stage (device is cpu on stages 1, 3); use auto (mpi on cpu stages, staged on cuda stages) or staged");
  const std::string one = config_error(kValid, {"device=[cuda, cuda, cuda, cpu]", "pipeline.transport=nccl"});
  EXPECT_NE(one.find("(device is cpu on stage 3)"), std::string::npos) << one;
  // mpi with cuda stages is refused when the transport is chosen (tests/runtime/transport_choice_test.cc).
  EXPECT_EQ(parse_config(kValid, {"device=[cuda, cpu, cpu, cpu]", "pipeline.transport=mpi"}).pipeline.transport,
            TransportKind::kMpi);
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

// optimizer.accumulate: calls per optimizer step (gradient accumulation across train_step calls).
TEST(ConfigParser, OptimizerAccumulate) {
  EXPECT_EQ(parse_config(kValid).optimizer.accumulate, 1);  // the default: every call steps
  EXPECT_EQ(parse_config(replace(kValid, "lr: 1.0e-3", "lr: 1.0e-3, accumulate: 3")).optimizer.accumulate, 3);
  EXPECT_EQ(parse_config(replace(kValid, "type: adamw, lr: 1.0e-3", "type: sgd, accumulate: 2")).optimizer.accumulate,
            2);
  EXPECT_EQ(parse_config(kValid, {"optimizer.accumulate=4"}).optimizer.accumulate, 4);
  for (const std::string bad : {"0", "-2", "1.5", "many", "[2]"}) {
    const std::string message = config_error(replace(kValid, "lr: 1.0e-3", "lr: 1.0e-3, accumulate: " + bad));
    EXPECT_NE(message.find("optimizer.accumulate (line 14)"), std::string::npos) << bad << ": " << message;
  }
  EXPECT_NE(config_error(replace(kValid, "lr: 1.0e-3", "lr: 1.0e-3, accumulate: 0")).find("positive integer"),
            std::string::npos);
  // Misspelt, it is an unknown key of the optimizer map, not silently 1.
  EXPECT_NE(config_error(replace(kValid, "lr: 1.0e-3", "lr: 1.0e-3, accumulation: 2")).find("accumulation"),
            std::string::npos);
}

// pipeline.rank_order: which ranks form a pipeline (core/config/rank_order.h); auto by default.
TEST(ConfigParser, PipelineRankOrder) {
  EXPECT_EQ(parse_config(kValid).pipeline.rank_order, RankOrder::kAuto);
  EXPECT_EQ(parse_config(kValid, {"pipeline.rank_order=stages_across_nodes"}).pipeline.rank_order,
            RankOrder::kStagesAcrossNodes);
  EXPECT_EQ(parse_config(kValid, {"pipeline.rank_order=stages_within_node"}).pipeline.rank_order,
            RankOrder::kStagesWithinNode);
  EXPECT_EQ(parse_config(kValid, {"pipeline.rank_order=stages_blocks_replicas"}).pipeline.rank_order,
            RankOrder::kStagesBlocksReplicas);
  EXPECT_EQ(parse_config(kValid, {"pipeline.rank_order=replicas_stages_blocks"}).pipeline.rank_order,
            RankOrder::kReplicasStagesBlocks);
  const std::string message = config_error(kValid, {"pipeline.rank_order=placement"});
  EXPECT_NE(message.find("pipeline.rank_order"), std::string::npos) << message;
  EXPECT_NE(message.find("stages_across_nodes"), std::string::npos) << message;  // lists the choices
  EXPECT_NE(message.find("replicas_blocks_stages"), std::string::npos) << message;
}

// The C API passes each call's batch: a config needs no data section (it reads as external data with no batch), and
// external data needs no batch. `sluice train` refuses such a config itself (train_command.cc).
TEST(ConfigParser, DataIsOptional) {
  const Config without = parse_config(replace(kValid, "data: {type: synthetic, batch: 64}\n", ""));
  EXPECT_FALSE(without.data.given);
  EXPECT_EQ(without.data.type, DataType::kExternal);
  EXPECT_EQ(without.data.batch, 0);
  const Config external = parse_config(replace(kValid, "data: {type: synthetic, batch: 64}", "data: {type: external}"));
  EXPECT_TRUE(external.data.given);
  EXPECT_EQ(external.data.batch, 0);
  EXPECT_TRUE(parse_config(kValid).data.given);
  // Data read by `sluice train` still needs its batch.
  EXPECT_NE(config_error(replace(kValid, "data: {type: synthetic, batch: 64}", "data: {type: synthetic}"))
                .find("missing required key \"batch\""),
            std::string::npos);
}

TEST(ConfigParser, MissingRequiredFieldsAreNamed) {
  EXPECT_NE(config_error(replace(kValid, "{type: linear, outputs: 64}", "{type: linear}"))
                .find("model.layers.0 (line 4): missing required key \"outputs\""),
            std::string::npos);
  EXPECT_NE(config_error(replace(kValid, "type: synthetic", "type: hdf5")).find("missing required key \"path\""),
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

// The parser is the only check of a layer entry (the builder trusts the LayerSpec): what the builder used to
// refuse a second time is refused here, naming key and line.
TEST(ConfigParser, RefusesLayerSettingsTheModelCannotUse) {
  EXPECT_NE(config_error(replace(kValid, "{type: residual_mlp, hidden: 128}", "{type: residual_mlp}"))
                .find("model.layers.3 (line 7): missing required key \"hidden\""),
            std::string::npos);
  EXPECT_NE(config_error(replace(kValid, "hidden: 128", "hidden: 0")).find("model.layers.3.hidden (line 7)"),
            std::string::npos);
  EXPECT_NE(config_error(replace(kValid, "hidden: 128", "hidden: 128, activation: swish"))
                .find("model.layers.3.activation (line 7): expected one of relu, gelu, tanh, got \"swish\""),
            std::string::npos);
  EXPECT_NE(config_error(replace(kValid, "{type: gelu}", "{type: layernorm, eps: 0}"))
                .find("model.layers.1.eps (line 5): expected a positive number"),
            std::string::npos);
  EXPECT_NE(config_error(replace(kValid, "{type: gelu}", "{type: custom, name: \"\"}"))
                .find("model.layers.1.name (line 5): a custom layer needs the non-empty name"),
            std::string::npos);
  EXPECT_NE(config_error(replace(kValid, "inputs: 32", "inputs: 0")).find("model.inputs (line 2)"),
            std::string::npos);
  const std::string unknown = config_error(replace(kValid, "{type: gelu}", "{type: conv2d}"));
  EXPECT_NE(unknown.find("model.layers.1.type (line 5): expected one of linear, relu, gelu, tanh, layernorm, "
                         "dropout, residual_mlp, conv, flatten, reshape, spectral_conv, fno_block, group_norm, "
                         "instance_norm, conv_transpose, pool, upsample, concat, add, patch_embed, transformer, unpatch, "
                         "custom, got \"conv2d\""),
            std::string::npos)
      << unknown;
}

TEST(ConfigParser, ResidualMlpActivationIsTyped) {
  const Config config = parse_config(replace(kValid, "hidden: 128", "hidden: 128, activation: tanh"));
  EXPECT_EQ(config.model.layers[3].activation, kernels::Activation::kTanh);
}

// Every YAML spelling of loss, pipeline.recompute, optimizer.type and data.type parses into its enum value,
// and the name tables spell each value back the same way.
TEST(ConfigParser, ValuesParseIntoEnumsAndBack) {
  for (std::size_t i = 0; i < model::loss_kind_names().size(); ++i) {
    const Config config = parse_config(kValid, {"loss=" + model::loss_kind_names()[i]});
    EXPECT_EQ(config.loss, static_cast<model::LossKind>(i));
    EXPECT_EQ(model::loss_kind_name(config.loss), model::loss_kind_names()[i]);
  }
  EXPECT_EQ(model::loss_kind_names(), (std::vector<std::string>{"mse", "cross_entropy", "custom"}));
  for (const std::string& mode : model::recompute_mode_names()) {
    const std::vector<std::string> sets = {"pipeline.recompute=" + mode, "pipeline.recompute_layers=[1]"};
    const Config config = parse_config(kValid, mode == "selective" ? sets : std::vector<std::string>{sets[0]});
    EXPECT_EQ(model::recompute_mode_name(config.pipeline.recompute), mode);
  }
  EXPECT_EQ(parse_config(kValid, {"pipeline.recompute=full"}).pipeline.recompute, model::RecomputeMode::kFull);
  EXPECT_NE(config_error(kValid, {"pipeline.recompute=full", "pipeline.recompute_layers=[1]"})
                .find("recompute_layers only applies with recompute: selective (recompute is \"full\")"),
            std::string::npos);
  EXPECT_EQ(parse_config(replace(kValid, "type: adamw", "type: sgd")).optimizer.type, OptimizerType::kSgd);
  EXPECT_EQ(optimizer_type_names(), (std::vector<std::string>{"sgd", "adamw"}));
  EXPECT_EQ(optimizer_type_name(OptimizerType::kAdamW), "adamw");
  EXPECT_EQ(parse_config(replace(kValid, "type: synthetic", "type: external")).data.type, DataType::kExternal);
  EXPECT_EQ(data_type_names(), (std::vector<std::string>{"synthetic", "hdf5", "external"}));
  EXPECT_EQ(data_type_name(DataType::kHdf5), "hdf5");
  EXPECT_NE(config_error(replace(kValid, "type: synthetic, batch: 64", "type: external, batch: 64, path: x"))
                .find("unknown key \"path\" in data external"),
            std::string::npos);
}

// data.replay: {capacity: N} is external data's replay buffer (sluice_submit_samples): a positive count, no other
// key, and refused (not ignored) for the data sources `sluice train` reads.
TEST(ConfigParser, DataReplayTakesAPositiveCapacityForExternalDataOnly) {
  const std::string external = replace(kValid, "type: synthetic, batch: 64", "type: external, batch: 64");
  EXPECT_EQ(parse_config(external).data.replay_capacity, 0);
  const auto with = [&](const std::string& replay) {
    return replace(kValid, "type: synthetic, batch: 64", "type: external, batch: 64, replay: " + replay);
  };
  EXPECT_EQ(parse_config(with("{capacity: 1000}")).data.replay_capacity, 1000);
  EXPECT_NE(config_error(with("{capacity: 0}")).find("data.replay.capacity (line 15): expected a positive number"),
            std::string::npos);
  EXPECT_NE(config_error(with("{capacity: -3}")).find("data.replay.capacity"), std::string::npos);
  EXPECT_NE(config_error(with("{capacity: lots}")).find("data.replay.capacity"), std::string::npos);
  EXPECT_NE(config_error(with("{}")).find("missing required key \"capacity\""), std::string::npos);
  EXPECT_NE(config_error(with("{capacity: 8, policy: fifo}")).find("unknown key \"policy\" in data.replay"),
            std::string::npos);
  EXPECT_NE(config_error(with("64")).find("data.replay (line 15): expected {capacity: N}"), std::string::npos);
  EXPECT_NE(config_error(replace(kValid, "batch: 64", "batch: 64, replay: {capacity: 8}"))
                .find("unknown key \"replay\" in data synthetic"),
            std::string::npos);
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

// yaml-cpp stops deep nesting (before the stack does) with the message "bad file": the error says what it is.
TEST(ConfigParser, DeepNestingIsNamedAsSuch) {
  const std::string message = config_error("model: " + std::string(5000, '[') + std::string(5000, ']') + "\n");
  EXPECT_NE(message.find("config: YAML nested too deeply: lists/maps inside one another beyond the parser's depth "
                         "limit at line 1, column "),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("bad file"), std::string::npos) << message;
}

TEST(ConfigParser, SyntaxErrorGivesTheLine) {
  const std::string message = config_error(replace(kValid, "loss: mse", "loss: mse: l1"));
  EXPECT_NE(message.find("config: YAML syntax error at line 13, column 10: illegal map value"), std::string::npos)
      << message;
}

TEST(ConfigParser, ScheduleAndChunksMustAgreeNamingTheKeyAndLine) {
  EXPECT_EQ(config_error(replace(kValid, "schedule: 1f1b", "schedule: zb-v\n  chunks: 1")),
            "config: pipeline.chunks (line 12): schedule zb-v needs pipeline.chunks = 2 (two stages per rank in a V), "
            "got chunks = 1");
  EXPECT_NE(config_error(replace(kValid, "schedule: 1f1b", "schedule: interleaved")).find(
                "pipeline.schedule (line 11): schedule interleaved needs pipeline.chunks >= 2"),
            std::string::npos);
  EXPECT_NE(config_error(replace(kValid, "schedule: 1f1b", "schedule: gpipe\n  chunks: 2")).find("pipeline.chunks"),
            std::string::npos);
}

TEST(ConfigParser, MissingFileIsAnIoErrorNamingIt) {
  try {
    parse_config("configs/does_not_exist.yaml");
    ADD_FAILURE() << "a missing config file was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kIo) << error.what();
    EXPECT_STREQ(error.what(), "config: config file \"configs/does_not_exist.yaml\" does not exist");
  }
}

TEST(ConfigOverrides, ReplaceScalarsWalkSequencesAndParseValuesAsYaml) {
  const Config config = parse_config(kValid, {"model.layers.4.outputs=128", "pipeline.schedule=zb-h1",
                                              "optimizer.lr=0.01", "pipeline.split=[1,1,1,2]"});
  EXPECT_EQ(config.model.layers[4].outputs, 128);
  EXPECT_EQ(config.pipeline.schedule, schedule::ScheduleKind::kZeroBubbleH1);
  EXPECT_DOUBLE_EQ(config.optimizer.lr, 0.01);
  EXPECT_EQ(config.pipeline.split, (std::vector<int>{1, 1, 1, 2}));
  // Config::text is the overridden document: parsing it again gives the same values.
  const Config reparsed = parse_config(config.text);
  EXPECT_EQ(reparsed.model.layers[4].outputs, 128);
  EXPECT_EQ(reparsed.pipeline.schedule, schedule::ScheduleKind::kZeroBubbleH1);
  EXPECT_DOUBLE_EQ(reparsed.optimizer.lr, 0.01);
}

TEST(ConfigOverrides, CreateMissingKeysAndSections) {
  const Config config = parse_config(kValid, {"checkpoint.dir=/tmp/ckpt", "checkpoint.every=5", "pipeline.chunks=2",
                                              "pipeline.schedule=zb-v", "model.layers.1={type: custom, name: foo}"});
  EXPECT_EQ(config.checkpoint.dir, "/tmp/ckpt");
  EXPECT_EQ(config.checkpoint.every, 5);
  EXPECT_EQ(config.pipeline.chunks, 2);
  EXPECT_EQ(config.model.layers[1].type, LayerType::kCustom);
  EXPECT_EQ(config.model.layers[1].name, "foo");
}

TEST(ConfigParser, CheckpointIsolatedReadsIsAutoAlwaysOrNever) {
  EXPECT_EQ(parse_config(kValid).checkpoint.isolated_reads, IsolatedReads::kAuto);
  EXPECT_EQ(parse_config(kValid, {"checkpoint.isolated_reads=always"}).checkpoint.isolated_reads,
            IsolatedReads::kAlways);
  EXPECT_EQ(parse_config(kValid, {"checkpoint.isolated_reads=never"}).checkpoint.isolated_reads,
            IsolatedReads::kNever);
  const std::string message = config_error(kValid, {"checkpoint.isolated_reads=sometimes"});
  EXPECT_NE(message.find("checkpoint.isolated_reads"), std::string::npos) << message;
  EXPECT_NE(message.find("auto, always, never"), std::string::npos) << message;
}

TEST(ConfigParser, CheckpointSamplesIsKeepOrDrop) {
  EXPECT_EQ(parse_config(kValid).checkpoint.samples, CheckpointSamples::kKeep);
  EXPECT_EQ(parse_config(kValid, {"checkpoint.samples=drop"}).checkpoint.samples, CheckpointSamples::kDrop);
  EXPECT_EQ(parse_config(kValid, {"checkpoint.samples=keep"}).checkpoint.samples, CheckpointSamples::kKeep);
  const std::string message = config_error(kValid, {"checkpoint.samples=some"});
  EXPECT_NE(message.find("checkpoint.samples"), std::string::npos) << message;
  EXPECT_NE(message.find("keep, drop"), std::string::npos) << message;
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
