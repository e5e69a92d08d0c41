// Pipelined training of models over fields equals the sequential run bit for bit (tests/runtime/bitwise_fidelity.h):
// convolutions with every padding, a stride, groups and a dilation; and skip connections across stages (a U-Net-like
// model whose first layer is read by later layers on the last stage) for every schedule, recompute policy and
// replica count; a Fourier neural operator (spectral_conv, fno_block) for every schedule; loss: cross_entropy on a
// field output; a small vision transformer (patch_embed, transformer blocks, unpatch) for every schedule, recompute
// policy and replica count. Run with 4 MPI ranks: DP=1 uses 4 pipeline ranks, DP=2 uses 2.
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>

#include "core/config/config_parser.h"
#include "tests/mpi_world.h"
#include "tests/runtime/bitwise_fidelity.h"
#include "tests/runtime/schedule_cases.h"

namespace sluice {
namespace {

using sluice::testing::world_size;

// A model of `layers` (YAML list entries) over 2 x 8 x 8 samples with the tests' pipeline, optimizer and data: the
// grid's schedule, chunks, stages, replicas and recompute policy.
config::Config grid_config(const std::string& layers, const std::string& loss, const testing::GridParam& param) {
  const auto& [c, policy, dp] = param;
  // "selective" drops the saved state of a skip's producer (layer 0) and of a reader's neighbour (layer 8).
  const std::string recompute =
      policy == "selective" ? std::string("selective, recompute_layers: [0, 8]") : policy;
  const int stages = world_size() / dp;
  const std::string yaml =
      "model:\n  inputs: [2, 8, 8]\n  layers:\n" + layers + "pipeline: {stages: " + std::to_string(stages) +
      ", schedule: " + c.schedule + ", chunks: " + std::to_string(c.chunks) + ", microbatches: 8, recompute: " +
      recompute + "}\nloss: " + loss +
      "\noptimizer: {type: adamw, lr: 0.01, weight_decay: 0.01, clip_grad_norm: 0.5}\n" +
      "data: {type: synthetic, batch: " + std::to_string(kReplicaBatch * dp) + "}\nseed: 7\nsteps: 3\n";
  return config::parse_config(yaml);
}

void expect_grid_case_equal_to_sequential(const std::string& layers, const std::string& loss,
                                          const testing::GridParam& param,
                                          data::TargetKind targets = data::TargetKind::kRegression) {
  const int dp = std::get<2>(param);
  ASSERT_EQ(world_size() % dp, 0);
  expect_bitwise_equal_to_sequential(grid_config(layers, loss, param), dp, kReplicaBatch, targets);
}

// Fields: convolutions with every padding, a stride, groups and a dilation, dropout on a field, flatten into
// linear layers, reshape from rows back to a field and on to rows, over 2 x 8 x 8 samples; 14
// layers, so every schedule (8 chunks with interleaving) has work.
const char* const kFieldLayers =
    "    - {type: conv, channels: 4, kernel: 3, padding: periodic}\n"
    "    - {type: gelu}\n"
    "    - {type: conv, channels: 8, kernel: 3, stride: 2, padding: zeros}\n"
    "    - {type: tanh}\n"
    "    - {type: dropout, p: 0.1}\n"
    "    - {type: conv, channels: 8, kernel: 3, dilation: 2, groups: 2, padding: reflect}\n"
    "    - {type: relu}\n"
    "    - {type: flatten}\n"
    "    - {type: linear, outputs: 16}\n"
    "    - {type: gelu}\n"
    "    - {type: reshape, shape: [1, 4, 4]}\n"
    "    - {type: conv, channels: 2, kernel: 3, padding: periodic}\n"
    "    - {type: reshape, shape: 32}\n"
    "    - {type: linear, outputs: 4}\n";

class FieldFidelity : public ::testing::TestWithParam<testing::GridParam> {};

TEST_P(FieldFidelity, ParametersAfterThreeStepsEqualSequentialBitForBit) {
  expect_grid_case_equal_to_sequential(kFieldLayers, "mse", GetParam());
}

// Every schedule once, with and without recompute on one replica; the skip grid below covers two replicas.
INSTANTIATE_TEST_SUITE_P(AllSchedules, FieldFidelity,
                         testing::schedule_recompute_grid_one_replica(),
                         testing::grid_name);

// A Fourier neural operator (issue 29): a 1 × 1 lift, 4 fno_blocks, a spectral_conv keeping every mode of the 8 × 8
// field (2·m = n, and the last dimension's Nyquist mode), GELU and a 1 × 1 projection; 8 layers, so every schedule
// (8 chunks with interleaving) has work.
const char* const kFnoLayers =
    "    - {type: conv, channels: 4, kernel: 1}\n"
    "    - {type: fno_block, channels: 4, modes: [3, 3]}\n"
    "    - {type: fno_block, channels: 4, modes: [3, 3]}\n"
    "    - {type: fno_block, channels: 3, modes: [2, 4]}\n"
    "    - {type: fno_block, channels: 4, modes: [3, 3]}\n"
    "    - {type: spectral_conv, channels: 4, modes: [4, 5]}\n"
    "    - {type: gelu}\n"
    "    - {type: conv, channels: 2, kernel: 1}\n";

class FnoFidelity : public ::testing::TestWithParam<testing::GridParam> {};

TEST_P(FnoFidelity, ParametersAfterThreeStepsEqualSequentialBitForBit) {
  expect_grid_case_equal_to_sequential(kFnoLayers, "mse", GetParam());
}

// Every schedule, with and without recompute, on one replica.
INSTANTIATE_TEST_SUITE_P(AllSchedules, FnoFidelity,
                         testing::schedule_recompute_grid_one_replica(),
                         testing::grid_name);

// Skip connections across stages: a one-level U-Net (pool, convolutions, upsample, concat with the level's input)
// whose first layer is also read by a later add, so its output rides through every stage between
// (core/model/skip_plan.h), with dropout, group norm and a transposed convolution on the way.
const char* const kSkipLayers =
    "    - {type: conv, channels: 4, kernel: 3, padding: periodic, name: e1}\n"
    "    - {type: gelu}\n"
    "    - {type: pool, mode: max, kernel: 2}\n"
    "    - {type: conv, channels: 8, kernel: 3, padding: zeros}\n"
    "    - {type: dropout, p: 0.1}\n"
    "    - {type: tanh}\n"
    "    - {type: upsample, factor: 2, mode: linear}\n"
    "    - {type: concat, from: e1}\n"
    "    - {type: conv, channels: 4, kernel: 3, dilation: 2, groups: 2, padding: reflect}\n"
    "    - {type: add, from: e1, name: g}\n"
    "    - {type: group_norm, groups: 2}\n"
    "    - {type: gelu}\n"
    "    - {type: conv_transpose, channels: 4, kernel: 1}\n"
    "    - {type: concat, from: g}\n"
    "    - {type: conv, channels: 2, kernel: 1}\n";

class SkipFidelity : public ::testing::TestWithParam<testing::GridParam> {};

TEST_P(SkipFidelity, ParametersAfterThreeStepsEqualSequentialBitForBit) {
  expect_grid_case_equal_to_sequential(kSkipLayers, "mse", GetParam());
}

INSTANTIATE_TEST_SUITE_P(AllSchedules, SkipFidelity, testing::schedule_recompute_dp_grid(), testing::grid_name);
// Selective recompute too, whose dropped runs re-run inside a stage around routed skips (one replica).
INSTANTIATE_TEST_SUITE_P(Selective, SkipFidelity,
                         ::testing::Combine(testing::all_schedules(), ::testing::Values("selective"),
                                            ::testing::Values(1)),
                         testing::grid_name);

// loss: cross_entropy on a field output (the softmax over 3 classes at each of the 8 x 8 points, a sample's loss the
// mean over its points): a skip from the first stage to the last, one-hot targets per point, the global batch's
// mean over replicas and micro-batches.
const char* const kCrossEntropyLayers =
    "    - {type: conv, channels: 4, kernel: 3, padding: periodic, name: e1}\n"
    "    - {type: gelu}\n"
    "    - {type: pool, mode: avg, kernel: 2}\n"
    "    - {type: conv, channels: 4, kernel: 3, padding: periodic}\n"
    "    - {type: tanh}\n"
    "    - {type: upsample, factor: 2}\n"
    "    - {type: concat, from: e1}\n"
    "    - {type: conv, channels: 4, kernel: 3, padding: periodic}\n"
    "    - {type: gelu}\n"
    "    - {type: conv, channels: 3, kernel: 1}\n";

class CrossEntropyFidelity : public ::testing::TestWithParam<testing::GridParam> {};

TEST_P(CrossEntropyFidelity, ParametersAfterThreeStepsEqualSequentialBitForBit) {
  expect_grid_case_equal_to_sequential(kCrossEntropyLayers, "cross_entropy", GetParam(), data::TargetKind::kOneHot);
}

INSTANTIATE_TEST_SUITE_P(AllSchedules, CrossEntropyFidelity, testing::schedule_recompute_dp_grid(),
                         testing::grid_name);

// A small vision transformer (issue 29): patch_embed, six pre-norm transformer blocks (attention per sample and
// head, one block with attention dropout keyed by the global sample, split I and W under the zero-bubble
// schedules) and unpatch back to the field, over 2 x 8 x 8 samples (16 tokens of 8 features, 2 heads); 8 layers,
// so interleaving's 8 chunks over 4 stages each hold one.
const char* const kVitLayers =
    "    - {type: patch_embed, patch: 2, dim: 8}\n"
    "    - {type: transformer, heads: 2}\n"
    "    - {type: transformer, heads: 2, mlp_ratio: 2}\n"
    "    - {type: transformer, heads: 2, dropout: 0.1}\n"
    "    - {type: transformer, heads: 4}\n"
    "    - {type: transformer, heads: 2, eps: 1e-6}\n"
    "    - {type: transformer, heads: 1}\n"
    "    - {type: unpatch, patch: 2, channels: 2, grid: [4, 4]}\n";

class VitFidelity : public ::testing::TestWithParam<testing::GridParam> {};

TEST_P(VitFidelity, ParametersAfterThreeStepsEqualSequentialBitForBit) {
  expect_grid_case_equal_to_sequential(kVitLayers, "mse", GetParam());
}

INSTANTIATE_TEST_SUITE_P(AllSchedules, VitFidelity, testing::schedule_recompute_dp_grid(), testing::grid_name);

}  // namespace
}  // namespace sluice
