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

#include "tests/cuda/cuda_test_support.h"
#include "tests/cuda/gpu_vs_cpu_training.h"

namespace sluice {
namespace {

constexpr char kTag[] = "[operator-gpu-vs-cpu]";  // the GPU kit (bench/gpu) greps it
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

class OperatorModelGpuVsCpu : public ::testing::Test {
 protected:
  void SetUp() override { SLUICE_SKIP_WITHOUT_CUDA_DEVICE(); }
};

TEST_F(OperatorModelGpuVsCpu, AnFnoTrainedThreeStepsMatchesTheCpuAndRepeatsBitForBit) {
  testing::expect_two_stage_gpu_matches_cpu(kTag, "FNO 2-D", kFnoModel, kTolerance);
}

TEST_F(OperatorModelGpuVsCpu, A1dFnoTrainedThreeStepsMatchesTheCpuAndRepeatsBitForBit) {
  testing::expect_two_stage_gpu_matches_cpu(kTag, "FNO 1-D", kFno1dModel, kTolerance);
}

TEST_F(OperatorModelGpuVsCpu, ASmallVitTrainedThreeStepsMatchesTheCpuAndRepeatsBitForBit) {
  testing::expect_two_stage_gpu_matches_cpu(kTag, "ViT", kVitModel, kTolerance);
}

}  // namespace
}  // namespace sluice
