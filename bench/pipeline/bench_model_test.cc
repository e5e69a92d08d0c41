#include "bench/pipeline/bench_model.h"

#include <gtest/gtest.h>

namespace sluice::bench {
namespace {

TEST(ChunksFor, VShapedAndInterleavedSchedulesGetTwoChunks) {
  EXPECT_EQ(chunks_for("interleaved"), 2);
  EXPECT_EQ(chunks_for("zb-v"), 2);
  EXPECT_EQ(chunks_for("1f1b"), 1);
  EXPECT_EQ(chunks_for("gpipe"), 1);
  EXPECT_EQ(chunks_for("zb-h1"), 1);
}

TEST(BenchConfig, ParsesIntoTheRequestedModelAndPipeline) {
  BenchModel model;
  model.width = 64;
  model.layers = 3;
  model.batch = 32;
  model.microbatches = 4;
  const config::Config cfg = bench_config(model, "zb-v");
  EXPECT_EQ(cfg.model.inputs, 64);
  ASSERT_EQ(cfg.model.layers.size(), 6u);
  for (size_t l = 0; l < cfg.model.layers.size(); l += 2) {
    EXPECT_EQ(cfg.model.layers[l].type, config::LayerType::kLinear);
    EXPECT_EQ(cfg.model.layers[l].outputs, 64);
    EXPECT_EQ(cfg.model.layers[l + 1].type, config::LayerType::kGelu);
  }
  EXPECT_EQ(cfg.pipeline.schedule, schedule::ScheduleKind::kZeroBubbleV);
  EXPECT_EQ(cfg.pipeline.chunks, 2);
  EXPECT_EQ(cfg.pipeline.microbatches, 4);
  EXPECT_EQ(cfg.pipeline.stages, 2);
  EXPECT_EQ(cfg.data.batch, 32);
  EXPECT_EQ(cfg.optimizer.type, config::OptimizerType::kSgd);
  EXPECT_EQ(cfg.cpu_threads.mode, config::Config::CpuThreads::Mode::kDefault);
  EXPECT_EQ(cfg.comm.wait, config::WaitPolicy::kAuto);
}

TEST(BenchConfig, CarriesTheOptimizerAndBlasThreadsOfTheComparison) {
  BenchModel model;
  model.optimizer = "adamw";
  model.cpu_threads = 2;
  model.wait = "yield";
  const config::Config cfg = bench_config(model, "1f1b");
  EXPECT_EQ(cfg.comm.wait, config::WaitPolicy::kYield);
  EXPECT_EQ(cfg.optimizer.type, config::OptimizerType::kAdamW);
  EXPECT_EQ(cfg.optimizer.weight_decay, 0.0);
  EXPECT_EQ(cfg.cpu_threads.mode, config::Config::CpuThreads::Mode::kFixed);
  EXPECT_EQ(cfg.cpu_threads.count, 2);
}

}  // namespace
}  // namespace sluice::bench
