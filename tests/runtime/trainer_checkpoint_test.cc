// Exact restart and resharding through HDF5 checkpoints (run with 4 MPI ranks):
// - stop after step k, restart from the file, continue to step N: parameters bit for bit identical to an
//   uninterrupted run, for every schedule, recompute on and off, DP 1 and 2;
// - a checkpoint saved with 4 stages loads with 2 stages or 1 and with another DP size, and training then
//   continues exactly as a run on the new layout would from the same state (the sequential reference with the
//   new DP size, loaded from the same file, is that run);
// - an incompatible checkpoint is refused on every rank and leaves the trainer untouched.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/config/config_parser.h"
#include "core/data/synthetic_data.h"
#include "core/runtime/sequential_reference.h"
#include "core/runtime/trainer.h"
#include "tests/runtime/schedule_cases.h"
#include "core/runtime/reference_checkpoint.h"
#include "core/runtime/trainer_checkpoint.h"
#include "tests/mpi_world.h"

namespace sluice {
namespace {

using sluice::testing::world_size;

constexpr int kTotalSteps = 5;
constexpr int kStopAfter = 2;
constexpr int64_t kGlobalBatch = 32;

// A path every rank agrees on (TEST_TMPDIR is the same for all ranks of one mpirun).
std::string shared_path(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

config::Config make_config(const std::string& schedule, int chunks, int stages, int microbatches,
                           const std::string& recompute, const std::string& optimizer = "adamw",
                           int last_width = 4) {
  const std::string yaml =
      "model:\n  inputs: 10\n  layers:\n"
      "    - {type: linear, outputs: 16}\n    - {type: gelu}\n    - {type: dropout, p: 0.2}\n"
      "    - {type: linear, outputs: 16}\n    - {type: layernorm}\n"
      "    - {type: residual_mlp, hidden: 20, activation: tanh}\n    - {type: relu}\n"
      "    - {type: linear, outputs: 12}\n    - {type: tanh}\n"
      "    - {type: linear, outputs: " + std::to_string(last_width) + "}\n"
      "pipeline: {stages: " + std::to_string(stages) + ", schedule: " + schedule + ", chunks: " +
      std::to_string(chunks) + ", microbatches: " + std::to_string(microbatches) + ", recompute: " + recompute +
      "}\nloss: mse\noptimizer: " +
      (optimizer == "adamw" ? std::string("{type: adamw, lr: 0.01, weight_decay: 0.01}")
                            : std::string("{type: sgd, lr: 0.05, momentum: 0.9}")) +
      "\ndata: {type: synthetic, batch: " + std::to_string(kGlobalBatch) + "}\nseed: 11\nsteps: 5\n";
  return config::parse_config(yaml);
}

struct Batch {
  std::vector<float> inputs, targets;
};

Batch batch_for(const config::Config& cfg, int64_t in, int64_t out, int step) {
  data::SyntheticData source(cfg.seed, in, out, data::TargetKind::kRegression);
  Batch b{std::vector<float>(kGlobalBatch * in), std::vector<float>(kGlobalBatch * out)};
  source.batch(step, 0, kGlobalBatch, b.inputs.data(), b.targets.data());
  return b;
}

std::vector<double> run_steps(runtime::Trainer& t, int from, int to) {
  const int64_t rows = kGlobalBatch / t.layout().data_parallel;
  const int64_t offset = t.layout().replica * rows;
  std::vector<double> losses;
  for (int step = from; step < to; ++step) {
    Batch b = batch_for(t.config(), t.parts().input_features, t.parts().output_features, step);
    losses.push_back(t.train_step(b.inputs.data() + offset * t.parts().input_features,
                                  b.targets.data() + offset * t.parts().output_features, rows)
                         .loss);
  }
  return losses;
}

std::map<std::string, std::vector<float>> local_parameters(runtime::Trainer& t) {
  std::map<std::string, std::vector<float>> out;
  for (const auto& [index, stage] : t.parts().stages) {
    for (model::Parameter* p : stage->parameters()) out[p->qualified_name()] = p->value.to_vector();
  }
  return out;
}

void expect_same_bits(const std::map<std::string, std::vector<float>>& a,
                      const std::map<std::string, std::vector<float>>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (const auto& [name, values] : a) {
    auto it = b.find(name);
    ASSERT_NE(it, b.end()) << what << ": " << name;
    ASSERT_EQ(values.size(), it->second.size()) << what << ": " << name;
    EXPECT_EQ(0, std::memcmp(values.data(), it->second.data(), values.size() * sizeof(float)))
        << what << ": " << name << " differs";
  }
}

using Case = testing::ScheduleCase;

class ExactRestart : public ::testing::TestWithParam<testing::GridParam> {};

TEST_P(ExactRestart, StopSaveRestartContinueEqualsUninterruptedBitForBit) {
  const auto& [c, recompute, dp] = GetParam();
  const config::Config cfg = make_config(c.schedule, c.chunks, world_size() / dp, 4, recompute);
  const std::string file = shared_path("restart_" + c.schedule + "_" + recompute + std::to_string(dp) + ".h5");

  runtime::Trainer uninterrupted(MPI_COMM_WORLD, cfg);
  uninterrupted.start();
  const std::vector<double> expected_losses = run_steps(uninterrupted, 0, kTotalSteps);

  std::vector<double> losses;
  {
    runtime::Trainer first(MPI_COMM_WORLD, cfg);
    first.start();
    losses = run_steps(first, 0, kStopAfter);
    runtime::save_checkpoint(first, file);
  }  // the first job ends here
  runtime::Trainer resumed(MPI_COMM_WORLD, cfg);
  resumed.start();
  runtime::load_checkpoint(resumed, file);
  ASSERT_EQ(resumed.steps_done(), static_cast<uint64_t>(kStopAfter));
  for (double l : run_steps(resumed, kStopAfter, kTotalSteps)) losses.push_back(l);

  EXPECT_EQ(losses, expected_losses);
  expect_same_bits(local_parameters(resumed), local_parameters(uninterrupted), "resumed vs uninterrupted");
}

INSTANTIATE_TEST_SUITE_P(
    AllSchedules, ExactRestart,
    testing::schedule_recompute_dp_grid(), testing::grid_name);

// Saved by 4 stages x 1 replica; loaded by (stages, replicas) = (4,1), (2,2), (1,4) and continued. Each must
// equal the sequential reference with the new replica count continued from the same file.
class Reshard : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

TEST_P(Reshard, ContinuesExactlyAsARunOnTheNewLayout) {
  const auto& [stages, optimizer] = GetParam();
  ASSERT_EQ(world_size(), 4);
  const std::string file = shared_path("reshard_" + std::to_string(stages) + optimizer + ".h5");
  {
    runtime::Trainer saver(MPI_COMM_WORLD, make_config("1f1b", 1, 4, 4, "none", optimizer));
    saver.start();
    run_steps(saver, 0, kStopAfter);
    runtime::save_checkpoint(saver, file);
  }
  const int dp = world_size() / stages;
  const int microbatches = stages == 4 ? 4 : 2;  // zb-h1 needs at least one micro-batch per stage
  const config::Config cfg = make_config(stages == 1 ? "gpipe" : "zb-h1", 1, stages, microbatches, "full", optimizer);
  runtime::Trainer resumed(MPI_COMM_WORLD, cfg);
  resumed.start();
  runtime::load_checkpoint(resumed, file);
  const std::vector<double> losses = run_steps(resumed, kStopAfter, kTotalSteps);

  runtime::SequentialReference reference(cfg, dp);
  runtime::load_checkpoint(reference, cfg, file);
  std::vector<double> expected_losses;
  for (int step = kStopAfter; step < kTotalSteps; ++step) {
    Batch b = batch_for(cfg, reference.input_features(), reference.output_features(), step);
    expected_losses.push_back(reference.train_step(b.inputs.data(), b.targets.data(), kGlobalBatch));
  }
  EXPECT_EQ(losses, expected_losses);
  std::map<std::string, std::vector<float>> expected;
  for (model::Parameter* p : reference.parameters()) {
    bool mine = false;
    for (const auto& [index, stage] : resumed.parts().stages) {
      mine |= p->layer_index >= stage->first_layer() && p->layer_index < stage->last_layer();
    }
    if (mine) expected[p->qualified_name()] = p->value.to_vector();
  }
  expect_same_bits(local_parameters(resumed), expected, "resharded to " + std::to_string(stages) + " stages");
}

INSTANTIATE_TEST_SUITE_P(Layouts, Reshard,
                         ::testing::Combine(::testing::Values(4, 2, 1), ::testing::Values("adamw", "sgd")),
                         [](const auto& info) {
                           return "stages" + std::to_string(std::get<0>(info.param)) + "_" + std::get<1>(info.param);
                         });

TEST(CheckpointLoad, IncompatibleModelIsRefusedEverywhereAndLeavesTrainerUntouched) {
  const std::string file = shared_path("incompatible.h5");
  {
    runtime::Trainer saver(MPI_COMM_WORLD, make_config("1f1b", 1, 4, 4, "none"));
    saver.start();
    run_steps(saver, 0, 1);
    runtime::save_checkpoint(saver, file);
  }
  // Same layer types, different last width: only the rank holding the last layer sees the mismatch, yet
  // every rank must refuse, and nobody may have overwritten its parameters.
  runtime::Trainer other(MPI_COMM_WORLD, make_config("1f1b", 1, 4, 4, "none", "adamw", 6));
  other.start();
  const auto before = local_parameters(other);
  try {
    runtime::load_checkpoint(other, file);
    FAIL() << "an incompatible checkpoint was loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCheckpoint);
  }
  expect_same_bits(local_parameters(other), before, "after a refused load");
  EXPECT_EQ(other.steps_done(), 0u);
}

}  // namespace
}  // namespace sluice
