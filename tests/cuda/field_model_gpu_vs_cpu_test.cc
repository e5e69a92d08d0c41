// A field model trained on a GPU (cuDNN convolutions, transposed convolution and pooling; the padding, upsampling,
// norm and skip kernels) against the same training on the CPU, and the GPU run repeated: one rank, 3 steps of
// plain SGD (each update lr times the gradient, so op differences pass through unamplified), two pipeline stages on
// two ranks (on cuda sharing the GPU through the staged transport), so field tensors and skips cross a boundary.
// - GPU vs CPU: losses and parameters within 1e-4 relative (per tensor, relative_max_error): the ops agree to
//   cuda_field_ops_test's 1e-4 (Winograd/FFT algorithms the heuristics may choose); any wrong op (an index, a
//   padding, a gradient that overwrites instead of adding) moves results by O(1e-2) or more. Not yet measured on a
//   GPU: this file was written on a machine without one.
// - GPU vs GPU: identical bits (the determinism rule: heuristic algorithms filtered to CUDNN_DETERMINISTIC).
// Rank 0 prints the measured differences ("[field-gpu-vs-cpu]") so a GPU machine's log records the numbers.
// Run with 2 MPI ranks (mpi_test, np = 2); each rank compares the parameters of its own stage.
#include <gtest/gtest.h>

#include "tests/cuda/cuda_test_support.h"
#include "tests/cuda/gpu_vs_cpu_training.h"

namespace sluice {
namespace {

constexpr char kTag[] = "[field-gpu-vs-cpu]";  // the GPU kit (bench/gpu) greps it
constexpr double kTolerance = 1e-4;

// Every field op the CUDA backend has: convolutions with periodic, zero (symmetric and, with the even kernel,
// asymmetric) and reflect padding, a stride and a dilation, max and average pooling, a transposed convolution that
// upsamples, linear and nearest upsampling, group norm, instance norm, layernorm over channels, a concat and an
// add (skips), then rows.
const char* const kFieldModel =
    "model:\n  inputs: [2, 8, 8]\n  layers:\n"
    "    - {type: conv, channels: 4, kernel: 3, padding: periodic, name: e1}\n"
    "    - {type: gelu}\n"
    "    - {type: pool, mode: max, kernel: 2}\n"
    "    - {type: conv, channels: 8, kernel: 3, padding: zeros}\n"
    "    - {type: tanh}\n"
    "    - {type: conv_transpose, channels: 4, kernel: 2, stride: 2}\n"
    "    - {type: concat, from: e1}\n"
    "    - {type: conv, channels: 4, kernel: 2, padding: zeros}\n"
    "    - {type: add, from: e1}\n"
    "    - {type: group_norm, groups: 2}\n"
    "    - {type: conv, channels: 4, kernel: 3, dilation: 2, groups: 2, padding: reflect}\n"
    "    - {type: pool, mode: avg, kernel: 2}\n"
    "    - {type: upsample, factor: 2, mode: linear}\n"
    "    - {type: layernorm}\n"
    "    - {type: instance_norm}\n"
    "    - {type: conv, channels: 2, kernel: 3, stride: 2, padding: zeros}\n"
    "    - {type: upsample, factor: 2}\n"
    "    - {type: flatten}\n"
    "    - {type: linear, outputs: 4}\n"
    "loss: mse\n";

// A field output with cross_entropy (the softmax over 3 classes at each of the 8 x 8 points): the per-point loss.
const char* const kFieldLossModel =
    "model:\n  inputs: [2, 8, 8]\n  layers:\n"
    "    - {type: conv, channels: 4, kernel: 3, padding: periodic}\n"
    "    - {type: gelu}\n"
    "    - {type: conv, channels: 3, kernel: 1}\n"
    "loss: cross_entropy\n";

class FieldModelGpuVsCpu : public ::testing::Test {
 protected:
  void SetUp() override { SLUICE_SKIP_WITHOUT_CUDA_DEVICE(); }
};

TEST_F(FieldModelGpuVsCpu, ThreeSgdStepsMatchTheCpuAndRepeatBitForBit) {
  testing::expect_two_stage_gpu_matches_cpu(kTag, "every field layer, mse", kFieldModel, kTolerance);
}

TEST_F(FieldModelGpuVsCpu, CrossEntropyOnAFieldOutputMatchesTheCpuAndRepeatsBitForBit) {
  testing::expect_two_stage_gpu_matches_cpu(kTag, "cross_entropy on a field", kFieldLossModel, kTolerance, 64);
}

}  // namespace
}  // namespace sluice
