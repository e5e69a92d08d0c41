// sluice_trainer_set_domain read by sluice_trainer_start (4 ranks; docs/DOMAIN.md, "The host's layout"):
// - an uneven 2 x 2 declaration (rows cut at 6 of 16, columns at 4 of 12), each rank passing its own block of the
//   same global samples, trains bit for bit like the undecomposed run (pipeline.domain [1, 1], the whole field
//   declared, on each rank alone): the same loss after every step and the same parameters of every layer;
//   after start sluice_trainer_features and the sample shapes are the rank's block;
// - a bad declaration (ranks 1 and 2 swap their blocks) fails start on every rank with the gather's message;
// - a declaration without pipeline.domain fails start on every rank.
#include <gtest/gtest.h>
#include <mpi.h>
#include <sluice/sluice.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/capi/run_test_support.h"
#include "tests/mpi_world.h"

namespace {

using sluice::testing::world_rank;

constexpr int64_t kRows = 16, kCols = 12, kBatch = 4, kSteps = 3;
constexpr int kLayers = 7;

// data.batch 8 fits every layout here (4 replicas x 2 micro-batches without a domain); the calls pass kBatch.
std::string config(const std::string& domain) {
  return "model:\n  inputs: [1, 16, 12]\n  layers:\n"
         "    - {type: conv, channels: 4, kernel: 3, padding: periodic}\n"
         "    - {type: relu}\n"
         "    - {type: pool, kernel: 2, mode: max}\n"
         "    - {type: conv, channels: 4, kernel: 3, padding: periodic}\n"
         "    - {type: upsample, factor: 2}\n"
         "    - {type: group_norm, groups: 2}\n"
         "    - {type: conv, channels: 1, kernel: 1}\n"
         "pipeline: {stages: 1, microbatches: 2" + domain + "}\n"
         "optimizer: {type: adamw, lr: 0.01}\ndata: {type: external, batch: 8}\nseed: 5\n";
}

struct Box {
  int64_t offset[2];
  int64_t extent[2];
};

// The uneven declared grid: rows [0, 6) and [6, 16), columns [0, 4) and [4, 12); block b row-major.
Box declared_block(int block) {
  const int64_t row_cut = 6, col_cut = 4;
  const int r = block / 2, c = block % 2;
  return Box{{r == 0 ? 0 : row_cut, c == 0 ? 0 : col_cut},
             {r == 0 ? row_cut : kRows - row_cut, c == 0 ? col_cut : kCols - col_cut}};
}

// Step `step`'s global samples [kBatch][1][16][12]: inputs, and targets a smooth function of them.
float input_at(int64_t step, int64_t sample, int64_t row, int64_t col) {
  return static_cast<float>(std::sin(0.31 * (step * kBatch + sample) + 0.47 * row + 0.23 * col));
}
float target_at(int64_t step, int64_t sample, int64_t row, int64_t col) {
  return static_cast<float>(std::cos(0.19 * (step * kBatch + sample) + 0.29 * row - 0.41 * col));
}

// The box of every sample of step `step`, [kBatch][1][box rows][box cols] in C order.
std::vector<float> cut(float (*value)(int64_t, int64_t, int64_t, int64_t), int64_t step, const Box& box) {
  std::vector<float> out;
  for (int64_t s = 0; s < kBatch; ++s)
    for (int64_t r = box.offset[0]; r < box.offset[0] + box.extent[0]; ++r)
      for (int64_t c = box.offset[1]; c < box.offset[1] + box.extent[1]; ++c) out.push_back(value(step, s, r, c));
  return out;
}

struct Trained {
  std::vector<float> losses;
  std::vector<std::vector<float>> params;  // per layer
};

// Declares `box` on `comm`'s trainer, starts it, trains kSteps and reads every layer's parameters.
Trained train(MPI_Comm comm, const std::string& yaml, const Box& box) {
  Trained run;
  sluice_trainer* t = nullptr;
  EXPECT_EQ(sluice_trainer_create(comm, yaml.c_str(), &t), SLUICE_OK) << sluice_last_error();
  const int64_t global[2] = {kRows, kCols};
  EXPECT_EQ(sluice_trainer_set_domain(t, 2, global, box.offset, box.extent), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(sluice_trainer_start(t), SLUICE_OK) << sluice_last_error();
  // After start the trainer's sample is the rank's block: what the calls take (the Fortran module checks arrays
  // against it).
  int64_t in_features = 0, out_features = 0, dims[SLUICE_MAX_SAMPLE_DIMS] = {};
  int rank = 0;
  EXPECT_EQ(sluice_trainer_features(t, &in_features, &out_features), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(in_features, box.extent[0] * box.extent[1]);
  EXPECT_EQ(out_features, box.extent[0] * box.extent[1]);
  EXPECT_EQ(sluice_trainer_input_shape(t, dims, &rank), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(std::vector<int64_t>(dims, dims + rank), (std::vector<int64_t>{1, box.extent[0], box.extent[1]}));
  EXPECT_EQ(sluice_trainer_output_shape(t, dims, &rank), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(std::vector<int64_t>(dims, dims + rank), (std::vector<int64_t>{1, box.extent[0], box.extent[1]}));
  for (int64_t step = 0; step < kSteps; ++step) {
    const std::vector<float> x = cut(input_at, step, box), y = cut(target_at, step, box);
    float loss = 0.0f;
    EXPECT_EQ(sluice_train_step(t, x.data(), y.data(), kBatch, &loss), SLUICE_OK) << sluice_last_error();
    run.losses.push_back(loss);
  }
  for (int layer = 0; layer < kLayers; ++layer) {
    int64_t count = 0;
    EXPECT_EQ(sluice_layer_param_count(t, layer, &count), SLUICE_OK) << sluice_last_error();
    std::vector<float> values(static_cast<size_t>(count));
    EXPECT_EQ(sluice_get_layer_params(t, layer, values.data(), count), SLUICE_OK) << sluice_last_error();
    run.params.push_back(values);
  }
  sluice_trainer_destroy(t);
  return run;
}

TEST(DeclaredDomain, AnUnevenDeclaredSplitTrainsLikeTheUndecomposedRunBitForBit) {
  const Trained whole = train(MPI_COMM_SELF, config(", domain: [1, 1]"), Box{{0, 0}, {kRows, kCols}});
  const Trained split = train(MPI_COMM_WORLD, config(", domain: [2, 2]"), declared_block(world_rank()));
  ASSERT_EQ(split.losses.size(), static_cast<size_t>(kSteps));
  ASSERT_EQ(whole.losses.size(), static_cast<size_t>(kSteps));
  for (int64_t step = 0; step < kSteps; ++step) {
    EXPECT_EQ(split.losses[step], whole.losses[step]) << "step " << step;
  }
  EXPECT_NE(whole.losses.front(), whole.losses.back()) << "training changed nothing";
  ASSERT_EQ(split.params.size(), whole.params.size());
  for (size_t layer = 0; layer < whole.params.size(); ++layer) {
    ASSERT_EQ(split.params[layer].size(), whole.params[layer].size()) << "layer " << layer;
    for (size_t i = 0; i < whole.params[layer].size(); ++i) {
      // Bitwise: EXPECT_EQ on floats is exact.
      EXPECT_EQ(split.params[layer][i], whole.params[layer][i]) << "layer " << layer << " parameter " << i;
    }
  }
}

// Start's verdict on `t` (every rank gets it): the status and the message.
void expect_start_fails(sluice_trainer* t, const std::string& fragment) {
  EXPECT_EQ(sluice_trainer_start(t), SLUICE_ERROR_INVALID_ARGUMENT) << sluice_last_error();
  const std::string message = sluice_last_error();
  EXPECT_NE(message.find(fragment), std::string::npos) << "rank " << world_rank() << ": \"" << message << "\"";
}

TEST(DeclaredDomain, ABlockTheLayoutDoesNotGiveTheRankFailsStartOnEveryRank) {
  sluice_trainer* t = nullptr;
  ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, config(", domain: [2, 2]").c_str(), &t));
  const int rank = world_rank();
  const Box box = declared_block(rank == 1 ? 2 : rank == 2 ? 1 : rank);  // ranks 1 and 2 swapped
  const int64_t global[2] = {kRows, kCols};
  ASSERT_SLUICE_OK(sluice_trainer_set_domain(t, 2, global, box.offset, box.extent));
  expect_start_fails(t, "rank 1 declared offset [6, 0], extent [10, 4], block 2 of the grid (row-major, the last "
                        "dimension fastest), but the trainer's layout places block 1 on it");
  sluice_trainer_destroy(t);
  t = nullptr;
  // Rank 3 declares nothing: named.
  ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, config(", domain: [2, 2]").c_str(), &t));
  const Box own = declared_block(rank);
  if (rank != 3) ASSERT_SLUICE_OK(sluice_trainer_set_domain(t, 2, global, own.offset, own.extent));
  expect_start_fails(t, "rank 3 declared no block while rank 0 did");
  sluice_trainer_destroy(t);
}

TEST(DeclaredDomain, ADeclarationWithoutPipelineDomainFailsStartOnEveryRank) {
  sluice_trainer* t = nullptr;
  ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, config("").c_str(), &t));
  const int64_t global[2] = {kRows, kCols}, zero[2] = {0, 0};
  ASSERT_SLUICE_OK(sluice_trainer_set_domain(t, 2, global, zero, global));  // every rank: the whole field
  expect_start_fails(t, "sluice_trainer_set_domain declared the ranks' blocks, but this run does not train on blocks");
  sluice_trainer_destroy(t);
}

}  // namespace
