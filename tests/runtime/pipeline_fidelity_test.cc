// The promise at the heart of Sluice: pipelined training gives the same parameters, bit for bit, as a
// single-process sequential run over the same micro-batches in the same order — for every schedule, with
// and without recomputation, with 1 and 2 data-parallel replicas, with dropout (so recomputation must replay
// the RNG) and with gradient clipping (so the global norm must be summed in a fixed order).
// Run with 4 MPI ranks: DP=1 uses 4 pipeline ranks, DP=2 uses 2.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/config/config_parser.h"
#include "core/data/synthetic_data.h"
#include "core/runtime/sequential_reference.h"
#include "core/runtime/run_report.h"
#include "core/runtime/trainer.h"
#include "tests/runtime/schedule_cases.h"
#include "core/schedule/simulator.h"
#include "tests/mpi_world.h"
#include "tests/runtime/bitwise_fidelity.h"

namespace sluice {
namespace {

using sluice::testing::world_size;

// `wide`: the same layers at widths 130-160, not multiples of OpenBLAS's register tiles, where its blocked
// kernels take other paths (edge tiles, several panels) than at the narrow widths.
std::string model_yaml(bool dropout, bool wide = false) {
  const std::string drop1 = dropout ? "    - {type: dropout, p: 0.2}\n" : "";
  const std::string drop2 = dropout ? "    - {type: dropout, p: 0.1}\n" : "";
  auto width = [wide](int narrow, int wide_width) { return std::to_string(wide ? wide_width : narrow); };
  return "model:\n"
         "  inputs: 12\n"
         "  layers:\n"
         "    - {type: linear, outputs: " + width(16, 160) + "}\n"
         "    - {type: gelu}\n" +
         drop1 +
         "    - {type: linear, outputs: " + width(16, 144) + "}\n"
         "    - {type: tanh}\n"
         "    - {type: layernorm}\n"
         "    - {type: residual_mlp, hidden: " + width(24, 136) + ", activation: relu}\n" +
         drop2 +
         "    - {type: linear, outputs: " + width(8, 130) + "}\n"
         "    - {type: relu}\n"
         "    - {type: linear, outputs: 4}\n";
}

config::Config make_config(const std::string& schedule, int chunks, int stages, int dp, const std::string& recompute,
                           int microbatches, bool dropout, const std::string& optimizer,
                           const std::string& extra_pipeline_keys = "", int64_t replica_batch = kReplicaBatch,
                           bool wide = false) {
  std::string yaml = model_yaml(dropout, wide) + "pipeline: {stages: " + std::to_string(stages) + ", schedule: " + schedule +
                     ", chunks: " + std::to_string(chunks) + ", microbatches: " + std::to_string(microbatches) +
                     ", recompute: " + recompute + extra_pipeline_keys + "}\n" + "loss: mse\n" + "optimizer: " + optimizer + "\n" +
                     "data: {type: synthetic, batch: " + std::to_string(replica_batch * dp) + "}\n" +
                     "seed: 7\nsteps: 3\n";
  return config::parse_config(yaml);
}

using Case = testing::ScheduleCase;

class Fidelity : public ::testing::TestWithParam<testing::GridParam> {};

TEST_P(Fidelity, ParametersAfterThreeStepsEqualSequentialBitForBit) {
  const auto& [c, recompute, dp] = GetParam();
  ASSERT_EQ(world_size() % dp, 0);
  const int stages = world_size() / dp;
  const config::Config cfg = make_config(c.schedule, c.chunks, stages, dp, recompute, 8, true,
                                         "{type: adamw, lr: 0.01, weight_decay: 0.01, clip_grad_norm: 0.5}");
  expect_bitwise_equal_to_sequential(cfg, dp);
}

INSTANTIATE_TEST_SUITE_P(
    AllSchedules, Fidelity,
    testing::schedule_recompute_dp_grid(), testing::grid_name);

// The same grid on the wide model: GEMMs with edge tiles must keep every schedule equal to the sequential run.
class WideFidelity : public ::testing::TestWithParam<testing::GridParam> {};

TEST_P(WideFidelity, ParametersAfterThreeStepsEqualSequentialBitForBit) {
  const auto& [c, recompute, dp] = GetParam();
  ASSERT_EQ(world_size() % dp, 0);
  const config::Config cfg = make_config(c.schedule, c.chunks, world_size() / dp, dp, recompute, 8, true,
                                         "{type: adamw, lr: 0.01, weight_decay: 0.01, clip_grad_norm: 0.5}", "",
                                         kReplicaBatch, true);
  expect_bitwise_equal_to_sequential(cfg, dp);
}

INSTANTIATE_TEST_SUITE_P(AllSchedules, WideFidelity, testing::schedule_recompute_dp_grid(), testing::grid_name);

// The benchmark's layers (1024 features, 32-row micro-batches, one BLAS thread): shapes the CPU backend computes
// through oneDNN instead of OpenBLAS (kernels/cpu/onednn_gemm.h), so the pipelined run and the sequential run
// must both take that route and still agree bit for bit. cpu_threads: 1 pins the route whatever the cores. At
// this depth (k = 1024) oneDNN's and OpenBLAS's sums differ in their last bits (at 256 they happen to agree),
// so a product that switched libraries between the two runs would show.
config::Config onednn_config(const std::string& schedule, int chunks, int stages, int dp) {
  std::string layers;
  for (int i = 0; i < 4; ++i) layers += "    - {type: linear, outputs: 1024}\n    - {type: gelu}\n";
  const std::string yaml = "model:\n  inputs: 1024\n  layers:\n" + layers + "    - {type: linear, outputs: 8}\n" +
                           "pipeline: {stages: " + std::to_string(stages) + ", schedule: " + schedule +
                           ", chunks: " + std::to_string(chunks) + ", microbatches: 8, recompute: none}\n" +
                           "loss: mse\noptimizer: {type: adamw, lr: 0.01, weight_decay: 0.01}\n" +
                           "data: {type: synthetic, batch: " + std::to_string(256 * dp) + "}\n" +
                           "cpu_threads: 1\nseed: 7\nsteps: 3\n";
  return config::parse_config(yaml);
}

class OnednnFidelity : public ::testing::TestWithParam<std::tuple<Case, int>> {};

TEST_P(OnednnFidelity, ParametersAfterThreeStepsEqualSequentialBitForBit) {
  const auto& [c, dp] = GetParam();
  ASSERT_EQ(world_size() % dp, 0);
  expect_bitwise_equal_to_sequential(onednn_config(c.schedule, c.chunks, world_size() / dp, dp), dp, 256);
}

INSTANTIATE_TEST_SUITE_P(AllSchedules, OnednnFidelity,
                         ::testing::Combine(testing::all_schedules(), ::testing::Values(1, 2)),
                         [](const ::testing::TestParamInfo<std::tuple<Case, int>>& info) {
                           return testing::identifier(std::get<0>(info.param).schedule + "_dp" +
                                                      std::to_string(std::get<1>(info.param)));
                         });

// Micro-batch counts that are not multiples of the stages: interleaved in one round of 6, in rounds of 5 and 4
// (a split PyTorch refuses), and every split-backward or multi-chunk schedule with fewer micro-batches than ranks.
// The orders differ from the m = 8 grid's; the parameters must still equal the sequential run's.
TEST(Fidelity, MicrobatchCountsThatAreNotMultiplesOfTheStages) {
  struct Odd {
    const char* schedule;
    int chunks, microbatches;
  };
  for (const Odd& c : {Odd{"interleaved", 2, 6}, Odd{"interleaved", 2, 9}, Odd{"interleaved", 2, 2},
                       Odd{"zb-h1", 1, 3}, Odd{"zb-v", 2, 2}, Odd{"zb-v", 2, 6}}) {
    SCOPED_TRACE(std::string(c.schedule) + " m=" + std::to_string(c.microbatches));
    const int64_t rows = 36;  // divisible by every micro-batch count above
    const config::Config cfg = make_config(c.schedule, c.chunks, world_size(), 1, "full", c.microbatches, true,
                                           "{type: adamw, lr: 0.01, clip_grad_norm: 0.5}", "", rows);
    expect_bitwise_equal_to_sequential(cfg, 1, rows);
  }
}

TEST(Fidelity, SgdWithMomentumAndSelectiveRecompute) {
  const config::Config cfg = make_config("1f1b", 1, world_size(), 1, "selective", 8, true,
                                         "{type: sgd, lr: 0.05, momentum: 0.9}", ", recompute_layers: [1, 2, 6]");
  expect_bitwise_equal_to_sequential(cfg, 1);
}

// With 4 replicas the order in which replica gradients are added matters in floating point (with 2 it does
// not: a + b == b + a); the ordered data-parallel sum must still match the sequential run bit for bit.
TEST(Fidelity, FourReplicasOfOneStageAddInReplicaOrder) {
  const int dp = world_size();
  const config::Config cfg = make_config("1f1b", 1, 1, dp, "full", 4, true,
                                         "{type: adamw, lr: 0.01, clip_grad_norm: 0.5}");
  expect_bitwise_equal_to_sequential(cfg, dp);
}

// Micro-batching must not change the maths: the pipelined run with 8 micro-batches stays within 1e-6
// (relative) of one full-batch step sequence without micro-batches. Catches average-of-averages scaling bugs.
TEST(Fidelity, MicroBatchedRunMatchesFullBatchRun) {
  const int stages = world_size();
  const std::string sgd = "{type: sgd, lr: 0.05}";
  config::Config cfg = make_config("1f1b", 1, stages, 1, "none", 8, false, sgd);
  config::Config full = make_config("1f1b", 1, stages, 1, "none", 1, false, sgd);
  runtime::Trainer trainer(MPI_COMM_WORLD, cfg);
  trainer.start();
  runtime::SequentialReference reference(full, 1);
  data::SyntheticData source(cfg.seed, trainer.parts().input_features, trainer.parts().output_features,
                             data::TargetKind::kRegression);
  for (int step = 0; step < kSteps; ++step) {
    Batch b = global_batch(source, step, kReplicaBatch);
    const double pipelined = trainer.train_step(b.inputs.data(), b.targets.data(), kReplicaBatch).loss;
    const double whole = reference.train_step(b.inputs.data(), b.targets.data(), kReplicaBatch);
    EXPECT_NEAR(pipelined, whole, 1e-6 * std::abs(whole)) << "step " << step + 1;
  }
  std::map<std::string, const model::Parameter*> expected;
  for (model::Parameter* p : reference.parameters()) expected[p->qualified_name()] = p;
  for (const auto& [index, stage] : trainer.parts().stages) {
    for (model::Parameter* p : stage->parameters()) {
      const model::Parameter* q = expected.at(p->qualified_name());
      double diff = 0.0, norm = 0.0;
      for (int64_t i = 0; i < p->value.size(); ++i) {
        const double d = p->value.data()[i] - q->value.data()[i];
        diff += d * d;
        norm += static_cast<double>(q->value.data()[i]) * q->value.data()[i];
      }
      EXPECT_LE(std::sqrt(diff), 1e-6 * std::sqrt(norm)) << p->qualified_name();
    }
  }
}

// The executor's measured activation stash peak must be what the simulator predicts for the schedule.
class StashPeak : public ::testing::TestWithParam<Case> {};

TEST_P(StashPeak, MeasuredPeakEqualsSimulatedPeakInflight) {
  const Case c = GetParam();
  const config::Config cfg = make_config(c.schedule, c.chunks, world_size(), 1, "none", 8, true, "{type: sgd, lr: 0.01}");
  runtime::Trainer trainer(MPI_COMM_WORLD, cfg);
  trainer.start();
  data::SyntheticData source(cfg.seed, trainer.parts().input_features, trainer.parts().output_features,
                             data::TargetKind::kRegression);
  Batch b = global_batch(source, 0, kReplicaBatch);
  trainer.train_step(b.inputs.data(), b.targets.data(), kReplicaBatch);
  const std::vector<int> expected = schedule::peak_inflight(trainer.parts().lowered);
  const int rank = trainer.layout().stage_rank;
  EXPECT_EQ(trainer.stats().counters.peak_stash_microbatches, expected.at(rank))
      << c.schedule << " on pipeline rank " << rank;
  EXPECT_GT(trainer.stats().counters.peak_stash_bytes, 0u);
}

INSTANTIATE_TEST_SUITE_P(AllSchedules, StashPeak, testing::all_schedules(),
                         [](const auto& info) { return testing::identifier(info.param.schedule); });

// pipeline.transport: staged through the CPU backend's host staging: every activation and gradient makes the
// trip a GPU pipeline on a shared GPU makes (buffer -> host copy -> MPI -> host copy -> buffer), minus the GPU.
// The copies must not change a bit, for any schedule's message pattern.
class StagedTransportFidelity : public ::testing::TestWithParam<Case> {};

TEST_P(StagedTransportFidelity, ParametersEqualSequentialBitForBit) {
  const Case& c = GetParam();
  const config::Config cfg = make_config(c.schedule, c.chunks, world_size(), 1, "full", 8, true,
                                         "{type: adamw, lr: 0.01, clip_grad_norm: 0.5}", ", transport: staged");
  expect_bitwise_equal_to_sequential(cfg, 1);
}

INSTANTIATE_TEST_SUITE_P(AllSchedules, StagedTransportFidelity, testing::all_schedules(),
                         [](const auto& info) { return testing::identifier(info.param.schedule); });

// The layout print names the transport each run uses: auto means mpi on the CPU.
TEST(PipelineTransport, LayoutNamesTheChosenTransport) {
  for (const std::string transport : {"auto", "mpi", "staged"}) {
    const config::Config cfg = make_config("1f1b", 1, world_size(), 1, "none", 4, false, "{type: sgd, lr: 0.01}",
                                           ", transport: " + transport);
    runtime::Trainer trainer(MPI_COMM_WORLD, cfg);
    trainer.start();
    const std::string layout = runtime::layout_description(trainer);
    const std::string expected = transport == "staged" ? "transport staged" : "transport mpi";
    EXPECT_NE(layout.find(expected), std::string::npos) << transport << ":\n" << layout;
  }
}

}  // namespace
}  // namespace sluice
