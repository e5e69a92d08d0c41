#include "tests/cuda/gpu_vs_cpu_training.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/config/config_parser.h"
#include "core/data/synthetic_data.h"
#include "core/runtime/trainer.h"
#include "tests/cuda/cuda_test_support.h"
#include "tests/mpi_world.h"

namespace sluice::testing {
namespace {

constexpr int kTwoStageSteps = 3;
constexpr int64_t kTwoStageBatch = 8;

}  // namespace

RunResult train_and_collect(const config::Config& cfg, int steps, int64_t batch, int64_t target_points) {
  runtime::Trainer trainer(MPI_COMM_WORLD, cfg);
  trainer.start();
  data::SyntheticData source(cfg.seed, trainer.parts().input_features, trainer.parts().output_features,
                             target_points > 1 ? data::TargetKind::kOneHot : data::TargetKind::kRegression,
                             target_points);
  std::vector<float> inputs(static_cast<size_t>(batch * trainer.parts().input_features));
  std::vector<float> targets(static_cast<size_t>(batch * trainer.parts().output_features));
  RunResult result;
  for (int step = 0; step < steps; ++step) {
    source.batch(step, 0, batch, inputs.data(), targets.data());
    result.losses.push_back(trainer.train_step(inputs.data(), targets.data(), batch).loss);
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

config::Config two_stage_config(const std::string& model, const std::string& device, int64_t batch) {
  const std::string transport = device == "cuda" ? "staged" : "mpi";
  return config::parse_config(model + "pipeline: {stages: 2, microbatches: 2, transport: " + transport + "}\n" +
                              "optimizer: {type: sgd, lr: 0.05}\ndata: {type: synthetic, batch: " +
                              std::to_string(batch) + "}\nseed: 11\nsteps: 3\ndevice: " + device + "\n");
}

void expect_two_stage_gpu_matches_cpu(const std::string& tag, const std::string& label, const std::string& model,
                                      double tolerance, int64_t target_points) {
  const auto run = [&](const char* device) {
    return train_and_collect(two_stage_config(model, device, kTwoStageBatch), kTwoStageSteps, kTwoStageBatch,
                             target_points);
  };
  const RunResult cpu = run("cpu");
  const RunResult gpu = run("cuda");
  const RunResult again = run("cuda");

  ASSERT_EQ(cpu.losses.size(), gpu.losses.size());
  double worst_loss = 0.0;
  for (size_t step = 0; step < cpu.losses.size(); ++step) {
    ASSERT_TRUE(std::isfinite(gpu.losses[step]) && cpu.losses[step] != 0.0) << "step " << step + 1;
    const double d = std::abs(gpu.losses[step] - cpu.losses[step]) / std::abs(cpu.losses[step]);
    worst_loss = std::max(worst_loss, d);
    EXPECT_LE(d, tolerance) << "step " << step + 1 << ": cpu " << cpu.losses[step] << ", gpu " << gpu.losses[step];
    EXPECT_EQ(gpu.losses[step], again.losses[step]) << "step " << step + 1 << ": two GPU runs differ";
  }
  ASSERT_EQ(cpu.parameters.size(), gpu.parameters.size());
  ASSERT_FALSE(gpu.parameters.empty());
  double worst_parameter = 0.0;
  std::string worst_name;
  for (const auto& [name, values] : gpu.parameters) {
    const auto expected = cpu.parameters.find(name);
    ASSERT_NE(expected, cpu.parameters.end()) << name << " exists only in the GPU run";
    const double error = relative_max_error(expected->second, values);
    if (error >= worst_parameter) {
      worst_parameter = error;
      worst_name = name;
    }
    EXPECT_LE(error, tolerance) << name;
    const std::vector<float>& repeated = again.parameters.at(name);
    ASSERT_EQ(repeated.size(), values.size()) << name;
    EXPECT_EQ(std::memcmp(repeated.data(), values.data(), values.size() * sizeof(float)), 0)
        << name << ": two GPU runs differ";
  }
  std::printf("%s rank %d, %s: losses relative %.3e; parameters per-tensor max-relative %.3e (%s); limit %.0e\n",
              tag.c_str(), world_rank(), label.c_str(), worst_loss, worst_parameter, worst_name.c_str(), tolerance);
  std::fflush(stdout);
}

}  // namespace sluice::testing
