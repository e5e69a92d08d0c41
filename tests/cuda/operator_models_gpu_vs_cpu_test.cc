// FNO and ViT models trained on a GPU (cuFFT spectral convolutions, cuBLAS attention, and the cuDNN 1 x 1
// convolutions, GEMMs, layernorms and GELUs around them) against the same training on the CPU, and the GPU run
// repeated: 3 steps of plain SGD (each update lr times the gradient, so op differences pass through unamplified),
// two pipeline stages on two ranks (on cuda sharing the GPU through the staged transport), so field and token
// tensors cross a stage boundary.
// - GPU vs CPU: losses and parameters within 1e-4 relative (per tensor, relative_max_error): the ops agree to
//   cuda_operator_ops_test's 5e-5 (spectral) and 1e-5 (attention), and the 1 x 1 convolutions to
//   cuda_field_ops_test's 1e-4; any wrong op moves results by O(1e-2) or more. Never run on a GPU yet: this file
//   was written on a machine without one.
// - GPU vs GPU: identical bits (no atomics, plans and algorithms chosen without timing).
// Rank 0 prints the measured differences ("[operator-gpu-vs-cpu]") so a GPU machine's log records the numbers.
// Run with 2 MPI ranks (mpi_test, np = 2); each rank compares the parameters of its own stage.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/config/config_parser.h"
#include "core/data/synthetic_data.h"
#include "core/runtime/trainer.h"
#include "tests/cuda/cuda_test_support.h"
#include "tests/mpi_world.h"

namespace sluice {
namespace {

constexpr int kSteps = 3;
constexpr int64_t kBatch = 8;
constexpr double kTolerance = 1e-4;

// An FNO: a lifting 1 x 1 convolution, two fno_blocks (spectral convolution + 1 x 1 convolution + GELU) with
// different modes, a last spectral convolution; 2-D periodic fields.
const char* const kFnoModel =
    "model:\n  inputs: [2, 8, 8]\n  layers:\n"
    "    - {type: conv, channels: 4, kernel: 1}\n"
    "    - {type: fno_block, channels: 4, modes: [3, 3]}\n"
    "    - {type: fno_block, channels: 4, modes: [2, 4]}\n"
    "    - {type: spectral_conv, channels: 2, modes: [2, 2]}\n"
    "loss: mse\n";

// A 1-D FNO with an odd extent (the last dimension's modes without a Nyquist twin).
const char* const kFno1dModel =
    "model:\n  inputs: [2, 9]\n  layers:\n"
    "    - {type: fno_block, channels: 3, modes: [4]}\n"
    "    - {type: fno_block, channels: 2, modes: [5]}\n"
    "loss: mse\n";

// A small ViT: patches of 4 x 4 embedded to 32 features (4 tokens), two transformer blocks of 2 heads, back to the
// field.
const char* const kVitModel =
    "model:\n  inputs: [2, 8, 8]\n  layers:\n"
    "    - {type: patch_embed, patch: 4, dim: 32}\n"
    "    - {type: transformer, heads: 2, mlp_ratio: 2}\n"
    "    - {type: transformer, heads: 2, mlp_ratio: 2}\n"
    "    - {type: unpatch, patch: 4, channels: 2, grid: [2, 2]}\n"
    "loss: mse\n";

// Two pipeline stages, one per rank, so field or token tensors cross a stage boundary; on cuda both ranks
// share the one GPU, so the transport is staged (NCCL refuses two ranks on one GPU).
config::Config model_config(const std::string& model, const std::string& device) {
  const std::string transport = device == "cuda" ? "staged" : "mpi";
  return config::parse_config(model + "pipeline: {stages: 2, microbatches: 2, transport: " + transport + "}\n" +
                              "optimizer: {type: sgd, lr: 0.05}\ndata: {type: synthetic, batch: " +
                              std::to_string(kBatch) + "}\nseed: 11\nsteps: 3\ndevice: " + device + "\n");
}

struct RunResult {
  std::vector<double> losses;
  std::map<std::string, std::vector<float>> parameters;  // by qualified name
};

RunResult train(const config::Config& cfg) {
  runtime::Trainer trainer(MPI_COMM_WORLD, cfg);
  trainer.start();
  data::SyntheticData source(cfg.seed, trainer.parts().input_features, trainer.parts().output_features,
                             data::TargetKind::kRegression);
  std::vector<float> inputs(static_cast<size_t>(kBatch * trainer.parts().input_features));
  std::vector<float> targets(static_cast<size_t>(kBatch * trainer.parts().output_features));
  RunResult result;
  for (int step = 0; step < kSteps; ++step) {
    source.batch(step, 0, kBatch, inputs.data(), targets.data());
    result.losses.push_back(trainer.train_step(inputs.data(), targets.data(), kBatch).loss);
  }
  for (const auto& [index, stage] : trainer.parts().stages) {
    for (model::Parameter* p : stage->parameters()) {
      std::vector<float>& values = result.parameters[p->qualified_name()];
      values.resize(static_cast<size_t>(p->value.size()));
      trainer.parts().backend->to_host(p->value, values.data());
    }
  }
  return result;
}

// Trains `model` on the CPU, then twice on the GPU; checks and prints the differences under `label`.
void expect_gpu_matches_cpu(const std::string& label, const std::string& model) {
  const RunResult cpu = train(model_config(model, "cpu"));
  const RunResult gpu = train(model_config(model, "cuda"));
  const RunResult again = train(model_config(model, "cuda"));

  ASSERT_EQ(cpu.losses.size(), gpu.losses.size());
  double worst_loss = 0.0;
  for (size_t step = 0; step < cpu.losses.size(); ++step) {
    ASSERT_TRUE(std::isfinite(gpu.losses[step]) && cpu.losses[step] != 0.0) << "step " << step + 1;
    const double d = std::abs(gpu.losses[step] - cpu.losses[step]) / std::abs(cpu.losses[step]);
    worst_loss = std::max(worst_loss, d);
    EXPECT_LE(d, kTolerance) << "step " << step + 1 << ": cpu " << cpu.losses[step] << ", gpu " << gpu.losses[step];
    EXPECT_EQ(gpu.losses[step], again.losses[step]) << "step " << step + 1 << ": two GPU runs differ";
  }
  ASSERT_EQ(cpu.parameters.size(), gpu.parameters.size());
  ASSERT_FALSE(gpu.parameters.empty());
  double worst_parameter = 0.0;
  std::string worst_name;
  for (const auto& [name, values] : gpu.parameters) {
    const auto expected = cpu.parameters.find(name);
    ASSERT_NE(expected, cpu.parameters.end()) << name << " exists only in the GPU run";
    const double error = testing::relative_max_error(expected->second, values);
    if (error >= worst_parameter) {
      worst_parameter = error;
      worst_name = name;
    }
    EXPECT_LE(error, kTolerance) << name;
    const std::vector<float>& repeated = again.parameters.at(name);
    ASSERT_EQ(repeated.size(), values.size()) << name;
    EXPECT_EQ(std::memcmp(repeated.data(), values.data(), values.size() * sizeof(float)), 0)
        << name << ": two GPU runs differ";
  }
  std::printf("[operator-gpu-vs-cpu] rank %d, %s: losses relative %.3e; parameters per-tensor max-relative %.3e (%s); "
              "limit %.0e\n",
              testing::world_rank(), label.c_str(), worst_loss, worst_parameter, worst_name.c_str(), kTolerance);
  std::fflush(stdout);
}

class OperatorModelGpuVsCpu : public ::testing::Test {
 protected:
  void SetUp() override { SLUICE_SKIP_WITHOUT_CUDA_DEVICE(); }
};

TEST_F(OperatorModelGpuVsCpu, AnFnoTrainedThreeStepsMatchesTheCpuAndRepeatsBitForBit) {
  expect_gpu_matches_cpu("FNO 2-D", kFnoModel);
}

TEST_F(OperatorModelGpuVsCpu, A1dFnoTrainedThreeStepsMatchesTheCpuAndRepeatsBitForBit) {
  expect_gpu_matches_cpu("FNO 1-D", kFno1dModel);
}

TEST_F(OperatorModelGpuVsCpu, ASmallVitTrainedThreeStepsMatchesTheCpuAndRepeatsBitForBit) {
  expect_gpu_matches_cpu("ViT", kVitModel);
}

}  // namespace
}  // namespace sluice
