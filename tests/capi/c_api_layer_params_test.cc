// Parameters by layer through the C API (4 ranks: 2 stages x 2 replicas):
// - every rank gets the same values, and they are the checkpoint's /model/layer_NNNN tensors in the documented
//   order (linear: weight then bias; layernorm: gamma then beta);
// - get after set round-trips on every rank, for a layer of each stage;
// - set acts like a checkpoint edited the same way: after a set, the saved checkpoint differs from one saved before
//   only in that layer, by exactly the values set, and a fresh trainer loading it predicts bit for bit the same;
// - a bad layer index, a wrong count (on one rank only, too), NULL arrays and values that differ between ranks give
//   INVALID_ARGUMENT on every rank, and change nothing.
#include <gtest/gtest.h>
#include <mpi.h>
#include <sluice/sluice.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tests/capi/checkpoint_tensors.h"
#include "tests/mpi_world.h"

#include "tests/capi/run_test_support.h"

namespace {

using sluice::testing::world_rank;

constexpr int kBatch = 8, kIn = 4, kOut = 3;
constexpr const char* kConfig =
    "model:\n  inputs: 4\n  layers:\n    - {type: linear, outputs: 6}\n    - {type: layernorm}\n"
    "    - {type: tanh}\n    - {type: linear, outputs: 3}\n"
    "pipeline: {stages: 2, schedule: 1f1b, microbatches: 2}\n"
    "optimizer: {type: adamw, lr: 0.01}\ndata: {type: external, batch: 8}\nseed: 9\n";

std::string scratch(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return std::string(tmp ? tmp : "/tmp") + "/" + name;
}

sluice_trainer* started() { return sluice::testing::started_trainer(kConfig); }

std::vector<float> inputs() {
  std::vector<float> x(kBatch * kIn);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.7 * i));
  return x;
}

void train(sluice_trainer* t, int steps) {
  const std::vector<float> x = inputs();
  std::vector<float> y(kBatch * kOut, 0.3f);
  for (int i = 0; i < steps; ++i) ASSERT_EQ(sluice_train_step(t, x.data(), y.data(), kBatch, nullptr), SLUICE_OK);
}

std::vector<float> predict(sluice_trainer* t) {
  const std::vector<float> x = inputs();
  std::vector<float> out(kBatch * kOut);
  EXPECT_EQ(sluice_predict(t, x.data(), out.data(), kBatch), SLUICE_OK) << sluice_last_error();
  return out;
}

std::vector<float> get(sluice_trainer* t, int layer) {
  int64_t count = -1;
  EXPECT_EQ(sluice_layer_param_count(t, layer, &count), SLUICE_OK) << sluice_last_error();
  std::vector<float> values(static_cast<size_t>(count));
  EXPECT_EQ(sluice_get_layer_params(t, layer, values.data(), count), SLUICE_OK) << sluice_last_error();
  return values;
}

// Whether every rank holds the same `values`.
bool same_everywhere(const std::vector<float>& values) {
  std::vector<float> root = values;
  MPI_Bcast(root.data(), static_cast<int>(root.size()), MPI_FLOAT, 0, MPI_COMM_WORLD);
  // An empty vector's data() may be null, which memcmp must not get even for 0 bytes.
  int same = values.empty() || std::memcmp(root.data(), values.data(), values.size() * sizeof(float)) == 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return same == 1;
}

std::vector<float> concat(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

TEST(LayerParams, GetIsTheCheckpointsTensorsInTheDocumentedOrderOnEveryRank) {
  sluice_trainer* t = started();
  train(t, 2);
  const std::string file = scratch("layer_params_get.h5");
  ASSERT_EQ(sluice_save_checkpoint(t, file.c_str()), SLUICE_OK) << sluice_last_error();
  const auto saved = sluice::capi_test::read_checkpoint_tensors(file);
  const std::map<int, std::vector<float>> expected = {
      {0, concat(saved.at("/model/layer_0000/weight"), saved.at("/model/layer_0000/bias"))},
      {1, concat(saved.at("/model/layer_0001/gamma"), saved.at("/model/layer_0001/beta"))},
      {2, {}},
      {3, concat(saved.at("/model/layer_0003/weight"), saved.at("/model/layer_0003/bias"))}};
  for (const auto& [layer, values] : expected) {
    const std::vector<float> got = get(t, layer);
    EXPECT_EQ(got, values) << "layer " << layer;
    EXPECT_TRUE(same_everywhere(got)) << "layer " << layer;
  }
  sluice_trainer_destroy(t);
}

TEST(LayerParams, SetActsLikeAnEditedCheckpointAndRoundTrips) {
  sluice_trainer* t = started();
  train(t, 1);
  const std::string before = scratch("layer_params_before.h5"), after = scratch("layer_params_after.h5");
  ASSERT_EQ(sluice_save_checkpoint(t, before.c_str()), SLUICE_OK) << sluice_last_error();
  for (int layer : {0, 3}) {  // one layer on each stage
    std::vector<float> values = get(t, layer);
    for (size_t i = 0; i < values.size(); ++i) values[i] = 0.25f * values[i] + 0.01f * static_cast<float>(i);
    ASSERT_EQ(sluice_set_layer_params(t, layer, values.data(), static_cast<int64_t>(values.size())), SLUICE_OK)
        << sluice_last_error();
    EXPECT_EQ(get(t, layer), values) << "layer " << layer;
  }
  ASSERT_EQ(sluice_save_checkpoint(t, after.c_str()), SLUICE_OK) << sluice_last_error();
  const std::vector<float> predicted = predict(t);
  train(t, 1);  // every replica took the values: a step after the set keeps them identical (or save would differ)

  // The edited checkpoint: /model of `before` with layers 0 and 3 replaced. Everything else is untouched.
  const auto a = sluice::capi_test::read_checkpoint_tensors(before);
  const auto b = sluice::capi_test::read_checkpoint_tensors(after);
  for (const auto& [path, values] : a) {
    const bool edited = path.rfind("/model/layer_0000/", 0) == 0 || path.rfind("/model/layer_0003/", 0) == 0;
    EXPECT_EQ(values != b.at(path), edited) << path;
  }
  sluice_trainer* loaded = started();
  ASSERT_EQ(sluice_load_checkpoint(loaded, after.c_str()), SLUICE_OK) << sluice_last_error();
  const std::vector<float> from_file = predict(loaded);
  EXPECT_EQ(0, std::memcmp(from_file.data(), predicted.data(), predicted.size() * sizeof(float)));
  sluice_trainer_destroy(loaded);
  sluice_trainer_destroy(t);
}

TEST(LayerParams, BadArgumentsFailOnEveryRankAndChangeNothing) {
  sluice_trainer* t = started();
  const std::vector<float> original = get(t, 0);
  std::vector<float> values(original.size(), 1.0f);
  const auto n = static_cast<int64_t>(values.size());
  int64_t count = 0;
  EXPECT_EQ(sluice_layer_param_count(t, 4, &count), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sluice_last_error()).find("layer 4 is not a layer"), std::string::npos) << sluice_last_error();
  EXPECT_EQ(sluice_get_layer_params(t, -1, values.data(), n), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(sluice_set_layer_params(t, 7, values.data(), n), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(sluice_set_layer_params(t, 0, values.data(), n + 1), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(sluice_get_layer_params(t, 0, nullptr, n), SLUICE_ERROR_INVALID_ARGUMENT);
  // One rank's count is wrong: every rank fails, naming it.
  EXPECT_EQ(sluice_set_layer_params(t, 0, values.data(), world_rank() == 2 ? n - 1 : n), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sluice_last_error()).find("rank 2"), std::string::npos) << sluice_last_error();
  // One rank's values differ: every rank fails.
  if (world_rank() == 3) values[1] = 2.0f;
  EXPECT_EQ(sluice_set_layer_params(t, 0, values.data(), n), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sluice_last_error()).find("different values"), std::string::npos) << sluice_last_error();
  EXPECT_EQ(get(t, 0), original);
  sluice_trainer* created = nullptr;
  ASSERT_EQ(sluice_trainer_create(MPI_COMM_WORLD, kConfig, &created), SLUICE_OK);
  EXPECT_EQ(sluice_get_layer_params(created, 0, values.data(), n), SLUICE_ERROR_STATE);
  sluice_trainer_destroy(created);
  sluice_trainer_destroy(t);
}

}  // namespace
