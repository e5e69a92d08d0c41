// Normalization on a domain split (issue 32 item 3; core/runtime/normalization_tiles.h): with
// `normalization: {inputs: auto, targets: auto}` a 2 x 2 split of an 8 x 8 field (4 ranks, each its block of every
// sample) computes its per-channel statistics per canonical tile, gathers the tiles' partials and adds them in
// global tile order, so every rank holds the undecomposed run's statistics (pipeline.domain [1, 1] on one rank,
// MPI_COMM_SELF) bit for bit, and 3 steps give its losses, parameters and predictions (its block) bit for bit.
// The statistics are read back from each run's checkpoint, and the split run's checkpoint, loaded by the
// undecomposed trainer, predicts the undecomposed outputs. With each block's own statistics (the block's mean and
// std instead of the field's) every one of these comparisons fails. Given per-channel statistics (applied per point)
// give the [1, 1] run's losses and predictions too.
// On 8 ranks (domain_normalization_8_ranks_test): 2 stages x 4 blocks against the [1, 1] run on one rank, and 2
// replicas x 4 blocks against 2 [1, 1] replicas on 2 ranks (statistics against one [1, 1] process fed the whole
// global batch): the statistics, losses, parameters and predictions bit for bit.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "checkpoint/reader.h"
#include "core/config/config_parser.h"
#include "core/runtime/normalization_checkpoint.h"
#include "core/runtime/trainer.h"
#include "core/runtime/trainer_checkpoint.h"
#include "tests/runtime/domain_trainer_runs.h"
#include "tests/mpi_world.h"

namespace sluice {
namespace {

using sluice::testing::world_rank;
using sluice::testing::world_size;

constexpr int kSteps = 3;
constexpr int64_t kRows = 4;
constexpr int64_t kChannels = 2;
constexpr int64_t kSide = 8;
constexpr int64_t kPoints = kSide * kSide;

constexpr const char* kAuto = "normalization: {inputs: auto, targets: auto}\n";

// The pipeline's stages and replicas (the undecomposed reference runs the same numbers on stages x replicas ranks).
struct Shape {
  int stages = 1;
  int replicas = 1;
  int64_t rows = kRows;  // samples a replica takes per step
};

config::Config make_config(bool split, const std::string& normalization = kAuto, Shape shape = {}) {
  return config::parse_config(
      "model:\n  inputs: [2, 8, 8]\n  layers:\n"
      "    - {type: conv, channels: 4, kernel: 3, padding: periodic}\n"
      "    - {type: gelu}\n"
      "    - {type: conv, channels: 2, kernel: 1}\n"
      "pipeline: {stages: " + std::to_string(shape.stages) + ", data_parallel: " + std::to_string(shape.replicas) +
      ", microbatches: 2, rank_order: stages_within_node, domain: " + std::string(split ? "[2, 2]" : "[1, 1]") + ", domain_tile: [2, 2]}\n"
      + normalization +
      "loss: mse\noptimizer: {type: adamw, lr: 0.01}\ndata: {type: external, batch: 4}\nseed: 5\n");
}

// Channels with different offsets and scales, varying over the field, so that a block's statistics are not the
// field's and normalization changes what the model sees.
float value(int kind, int64_t s, int64_t c, int64_t y, int64_t x) {
  const double wave = std::sin(0.37 * static_cast<double>(x + 1) * (c + 1) + 0.23 * static_cast<double>(y * y) +
                               0.71 * static_cast<double>(s) + 1.3 * kind);
  return static_cast<float>((3.0 + 2.0 * c + kind) * wave + 0.5 * static_cast<double>(y) + 10.0 * (c + 1 - kind));
}

std::vector<float> batch(int kind, int64_t first, const config::DomainBox& box, int64_t rows = kRows) {
  const auto of_kind = [kind](int64_t s, int64_t c, int64_t y, int64_t x) { return value(kind, s, c, y, x); };
  return runtime::domain_runs::field_samples(of_kind, kChannels, kSide, first, rows, box);
}

using runtime::domain_runs::Params;
using runtime::domain_runs::params_of;
using runtime::domain_runs::temp_path;
struct History {
  std::vector<double> losses;
  std::vector<Params> params;
  std::vector<float> prediction;  // this rank's block of the outputs of samples 100..103
  config::DomainBox box;
};

std::vector<float> predict(runtime::Trainer& trainer, const config::DomainBox& box) {
  const std::vector<float> in = batch(0, 100, box);
  std::vector<float> out(static_cast<size_t>(kRows * trainer.parts().output_features));
  trainer.predict(in.data(), out.data(), kRows);
  return out;
}

config::DomainBox box_of(const runtime::Trainer& trainer) {
  return trainer.layout().blocks > 1 ? trainer.parts().domain->box() : config::DomainBox{{0, 0}, {kSide, kSide}};
}

// shape.rows samples a replica per step, the step's global batch replica-major (samples (step · replicas + replica)
// · rows ..), this rank's block of each.
History train(MPI_Comm comm, bool split, const std::string& save, const std::string& normalization = kAuto,
              Shape shape = {}) {
  runtime::Trainer trainer(comm, make_config(split, normalization, shape));
  trainer.start();
  History h;
  h.box = box_of(trainer);
  for (int step = 0; step < kSteps; ++step) {
    const int64_t first = (static_cast<int64_t>(step) * shape.replicas + trainer.layout().replica) * shape.rows;
    const std::vector<float> in = batch(0, first, h.box, shape.rows), target = batch(1, first, h.box, shape.rows);
    h.losses.push_back(trainer.train_step(in.data(), target.data(), shape.rows).loss);
    h.params.push_back(params_of(trainer));
  }
  runtime::save_checkpoint(trainer, save);
  h.prediction = predict(trainer, h.box);
  return h;
}

// The statistics a checkpoint holds, as [C] per side (points 1: the file's lengths are the channel counts).
runtime::SavedNormalization statistics_in(const std::string& path) {
  const checkpoint::Reader reader(path);
  return runtime::read_normalization(reader, kChannels * kPoints, kChannels * kPoints, kPoints, kPoints);
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::vector<float> cut(const std::vector<float>& whole, const config::DomainBox& box) {
  return runtime::domain_runs::cut_field(whole, kChannels, kSide, box);
}

// The statistics the checkpoints at split_path and whole_path hold, bit for bit.
void expect_same_statistics(const std::string& split_path, const std::string& whole_path, const std::string& at) {
  const runtime::SavedNormalization split_stats = statistics_in(split_path);
  const runtime::SavedNormalization whole_stats = statistics_in(whole_path);
  ASSERT_EQ(whole_stats.inputs.mean.size(), static_cast<size_t>(kChannels));
  ASSERT_EQ(whole_stats.targets.mean.size(), static_cast<size_t>(kChannels));
  EXPECT_GT(std::abs(whole_stats.inputs.mean[1]), 1.0f);  // the data is far from normalized: the statistics matter
  EXPECT_TRUE(same_bits(split_stats.inputs.mean, whole_stats.inputs.mean)) << at << ": input means";
  EXPECT_TRUE(same_bits(split_stats.inputs.std, whole_stats.inputs.std)) << at << ": input stds";
  EXPECT_TRUE(same_bits(split_stats.targets.mean, whole_stats.targets.mean)) << at << ": target means";
  EXPECT_TRUE(same_bits(split_stats.targets.std, whole_stats.targets.std)) << at << ": target stds";
}

// The split run `got` against the undecomposed `want`: every loss and every parameter this rank holds after every
// step and the de-normalized prediction (this rank's block), bit for bit.
void expect_same_run(const History& got, const History& want, const std::string& at) {
  ASSERT_EQ(got.losses.size(), want.losses.size());
  for (size_t s = 0; s < got.losses.size(); ++s) {
    EXPECT_EQ(std::memcmp(&got.losses[s], &want.losses[s], sizeof(double)), 0)
        << at << ", step " << s + 1 << ": loss " << got.losses[s] << " vs " << want.losses[s];
    ASSERT_FALSE(got.params[s].empty()) << at;
    for (const auto& [name, values] : got.params[s]) {
      ASSERT_EQ(want.params[s].count(name), 1u) << at << ": " << name;
      EXPECT_TRUE(same_bits(values, want.params[s].at(name))) << at << ", step " << s + 1 << ": " << name;
    }
  }
  EXPECT_LT(got.losses.back(), got.losses.front()) << at << ": the model does not learn";
  EXPECT_TRUE(same_bits(got.prediction, cut(want.prediction, got.box))) << at << ": prediction (de-normalized)";
}

TEST(DomainNormalizationTest, FourBlocksGiveTheUndecomposedStatisticsAndRun) {
  if (world_size() != 4) GTEST_SKIP() << "4 ranks";
  const std::string split_path = temp_path("domain_norm_split.h5");
  const std::string whole_path = temp_path("domain_norm_whole_" + std::to_string(world_rank()) + ".h5");
  const History got = train(MPI_COMM_WORLD, true, split_path);
  const History want = train(MPI_COMM_SELF, false, whole_path);
  const std::string at = "world rank " + std::to_string(world_rank());
  expect_same_statistics(split_path, whole_path, at);
  expect_same_run(got, want, at);

  // Layout-free: the split run's checkpoint (parameters and statistics) on one block predicts the undecomposed
  // outputs.
  runtime::Trainer resumed(MPI_COMM_SELF, make_config(false));
  resumed.start();
  runtime::load_checkpoint(resumed, split_path);
  EXPECT_TRUE(same_bits(predict(resumed, box_of(resumed)), want.prediction)) << at << ": prediction after resume";
}

// Given statistics (one per channel) are applied per point: a split needs nothing more to give the [1, 1] run's bits.
TEST(DomainNormalizationTest, GivenPerChannelStatisticsOnFourBlocks) {
  if (world_size() != 4) GTEST_SKIP() << "4 ranks";
  const std::string given =
      "normalization: {inputs: given, inputs_mean: [10, 20], inputs_std: [3, 5], targets: given, "
      "targets_mean: [0, 10], targets_std: [4, 6]}\n";
  const History got = train(MPI_COMM_WORLD, true, temp_path("domain_norm_given.h5"), given);
  const History want =
      train(MPI_COMM_SELF, false, temp_path("domain_norm_given_" + std::to_string(world_rank()) + ".h5"), given);
  ASSERT_EQ(got.losses.size(), want.losses.size());
  for (size_t s = 0; s < got.losses.size(); ++s) {
    EXPECT_EQ(std::memcmp(&got.losses[s], &want.losses[s], sizeof(double)), 0) << "step " << s + 1;
  }
  EXPECT_TRUE(same_bits(got.prediction, cut(want.prediction, got.box))) << "world rank " << world_rank();
}

// 8 ranks (oversubscribed), against one undecomposed process fed each step's whole global batch of 8 samples
// (`single`: one stage, one replica). 2 stages x 4 blocks (the inputs' partials come from the first stage's ranks,
// the targets' from the last's) taking the 8 samples per step: the single run's statistics and run (a stage count
// changes no bit). 2 replicas x 4 blocks (each replica holds its 4 rows of the first call's global batch): the
// single run's statistics (a reference that shares no replica bookkeeping with the run it checks), and the run of 2
// undecomposed replicas on world ranks b and b + 4 (the split's replica of a rank is world rank / 4).
TEST(DomainNormalizationTest, StagesAndReplicasOnFourBlocksGiveTheUndecomposedRun) {
  if (world_size() != 8) GTEST_SKIP() << "8 ranks";
  const std::string me = std::to_string(world_rank());
  const std::string single_path = temp_path("domain_norm8_single_" + me + ".h5");
  const History single = train(MPI_COMM_SELF, false, single_path, kAuto, Shape{1, 1, 2 * kRows});

  const std::string staged_path = temp_path("domain_norm8_stages.h5");
  const History staged = train(MPI_COMM_WORLD, true, staged_path, kAuto, Shape{2, 1, 2 * kRows});
  MPI_Barrier(MPI_COMM_WORLD);  // the split run's checkpoint is written before any rank reads it
  expect_same_statistics(staged_path, single_path, "2 stages x 4 blocks, world rank " + me);
  expect_same_run(staged, single, "2 stages x 4 blocks, world rank " + me);

  MPI_Comm pair = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank() % 4, world_rank() / 4, &pair);
  const std::string replicated_path = temp_path("domain_norm8_replicas.h5");
  const History replicated = train(MPI_COMM_WORLD, true, replicated_path, kAuto, Shape{1, 2});
  const History replicas = train(pair, false, temp_path("domain_norm8_pair_" + std::to_string(world_rank() % 4) +
                                                        ".h5"), kAuto, Shape{1, 2});
  MPI_Comm_free(&pair);
  MPI_Barrier(MPI_COMM_WORLD);
  expect_same_statistics(replicated_path, single_path, "2 replicas x 4 blocks, world rank " + me);
  expect_same_run(replicated, replicas, "2 replicas x 4 blocks, world rank " + me);
}

}  // namespace
}  // namespace sluice
