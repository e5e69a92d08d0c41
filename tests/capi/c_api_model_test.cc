// The inference-only model (sluice_model_*) against the trainer's sluice_predict on 4 ranks. A trainer trains a
// few steps and saves; every rank then loads that checkpoint into a sluice_model of its own (no communicator) and
// its predictions must equal sluice_predict's bit for bit: for a batch that divides by the micro-batches, for
// batch 1 and for a batch that does not divide (both of which sluice_predict now takes). Layouts: 4 stages and
// 2 stages x 2 replicas, with dropout in the model (off in both), and a model with a custom (callback) layer
// registered on the trainer and on the model. Misuse returns documented statuses naming the problem.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <sluice/sluice.h>

#include "tests/capi/linear_callback.h"
#include "tests/capi/run_test_support.h"

namespace {

using sluice::testing::fresh_dir;
using sluice::testing::world_rank;

constexpr int kInputs = 5, kOutputs = 3, kWidth = 6, kMicrobatches = 4, kBatch = 8;

std::string config_with(const std::string& layer_3, const std::string& pipeline) {
  return "model:\n  inputs: 5\n  layers:\n    - {type: linear, outputs: 6}\n    - {type: tanh}\n"
         "    - {type: dropout, p: 0.3}\n    - " + layer_3 + "\n    - {type: layernorm}\n"
         "    - {type: linear, outputs: 3}\n"
         "pipeline: {" + pipeline + ", microbatches: 4}\n"
         "optimizer: {type: adamw, lr: 0.05}\ndata: {type: external, batch: 8}\nseed: 11\n";
}

std::vector<float> inputs_of(int64_t rows, int k) {
  std::vector<float> x(static_cast<size_t>(rows * kInputs));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.37 * i + k));
  return x;
}

// Trains `steps` steps of this replica's kBatch rows, saves into a fresh directory and returns the file's path.
std::string train_and_save(sluice_trainer* t, const std::string& name, int steps) {
  for (int s = 0; s < steps; ++s) {
    const std::vector<float> x = inputs_of(kBatch, s);
    std::vector<float> y(kBatch * kOutputs);
    for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(std::cos(0.5 * i - s));
    EXPECT_EQ(sluice_train_step(t, x.data(), y.data(), kBatch, nullptr), SLUICE_OK) << sluice_last_error();
  }
  const std::string path = fresh_dir(name) + ".h5";
  EXPECT_EQ(sluice_save_checkpoint(t, path.c_str()), SLUICE_OK) << sluice_last_error();
  return path;
}

// sluice_predict and sluice_model_predict of the same rows; the model's own features must match the trainer's.
void expect_same_predictions(sluice_trainer* t, sluice_model* m) {
  int64_t in = 0, out = 0;
  ASSERT_SLUICE_OK(sluice_model_features(m, &in, &out));
  EXPECT_EQ(in, kInputs);
  EXPECT_EQ(out, kOutputs);
  for (int64_t rows : {int64_t{kBatch}, int64_t{1}, int64_t{7}, int64_t{3}, int64_t{13}}) {
    const std::vector<float> x = inputs_of(rows, 100 + static_cast<int>(rows));
    std::vector<float> pipelined(static_cast<size_t>(rows * kOutputs), NAN), alone(pipelined.size(), NAN);
    ASSERT_SLUICE_OK(sluice_predict(t, x.data(), pipelined.data(), rows));
    ASSERT_SLUICE_OK(sluice_model_predict(m, x.data(), alone.data(), rows));
    EXPECT_EQ(std::memcmp(pipelined.data(), alone.data(), pipelined.size() * sizeof(float)), 0)
        << "batch " << rows << " on rank " << world_rank() << ": first values " << pipelined[0] << " vs " << alone[0];
  }
}

void check_layout(const std::string& pipeline, const std::string& name) {
  sluice_trainer* t = nullptr;
  ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, config_with("{type: linear, outputs: 6}", pipeline).c_str(), &t));
  ASSERT_SLUICE_OK(sluice_trainer_start(t));
  const std::string path = train_and_save(t, name, 3);
  sluice_model* m = nullptr;
  ASSERT_SLUICE_OK(sluice_model_load(path.c_str(), &m));
  expect_same_predictions(t, m);
  // The trained model differs from a fresh one: the comparison above is not between two untrained models.
  sluice_trainer* fresh = nullptr;
  ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, config_with("{type: linear, outputs: 6}", pipeline).c_str(), &fresh));
  ASSERT_SLUICE_OK(sluice_trainer_start(fresh));
  const std::vector<float> x = inputs_of(kBatch, 5);
  std::vector<float> a(kBatch * kOutputs), b(kBatch * kOutputs);
  ASSERT_SLUICE_OK(sluice_predict(fresh, x.data(), a.data(), kBatch));
  ASSERT_SLUICE_OK(sluice_model_predict(m, x.data(), b.data(), kBatch));
  EXPECT_NE(a, b);
  sluice_trainer_destroy(fresh);
  sluice_model_destroy(m);
  sluice_trainer_destroy(t);
}

TEST(InferenceModel, EqualsPredictOfFourStages) { check_layout("stages: 4, schedule: 1f1b", "model_4_stages"); }

TEST(InferenceModel, EqualsPredictOfTwoStagesTimesTwoReplicas) {
  check_layout("stages: 2, schedule: gpipe", "model_2x2");
}

TEST(InferenceModel, EqualsPredictOfInterleavedChunks) {
  check_layout("stages: 2, schedule: interleaved, chunks: 2", "model_interleaved");
}

TEST(InferenceModel, CustomLayerRegisteredOnTheModel) {
  linear_callback layer{kWidth, kWidth, 0};
  sluice_layer_ops ops = linear_callback_ops(&layer);
  std::vector<float> initial(static_cast<size_t>(ops.num_params));
  for (size_t i = 0; i < initial.size(); ++i) initial[i] = static_cast<float>(0.1 * std::sin(1.3 * i));
  ops.initial_params = initial.data();
  const std::string config = config_with("{type: custom, name: lin}", "stages: 4, schedule: 1f1b");
  sluice_trainer* t = nullptr;
  ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, config.c_str(), &t));
  ASSERT_SLUICE_OK(sluice_trainer_register_layer(t, "lin", &ops, &layer));
  ASSERT_SLUICE_OK(sluice_trainer_start(t));
  const std::string path = train_and_save(t, "model_custom", 2);

  // Without the layer the load fails naming it, and the handle stays usable.
  sluice_model* m = nullptr;
  ASSERT_SLUICE_OK(sluice_model_create(&m));
  EXPECT_EQ(sluice_model_load_checkpoint(m, path.c_str()), SLUICE_ERROR_CONFIG);
  EXPECT_NE(std::string(sluice_last_error()).find("lin"), std::string::npos) << sluice_last_error();
  // Inference needs forward only: the backward callbacks may be absent.
  linear_callback model_layer{kWidth, kWidth, 0};
  sluice_layer_ops forward_only = linear_callback_ops(&model_layer);
  forward_only.backward_input = nullptr;
  forward_only.backward_weight = nullptr;
  forward_only.backward = nullptr;
  ASSERT_SLUICE_OK(sluice_model_register_layer(m, "lin", &forward_only, &model_layer));
  ASSERT_SLUICE_OK(sluice_model_load_checkpoint(m, path.c_str()));
  expect_same_predictions(t, m);
  EXPECT_GT(model_layer.forward_calls, 0) << "the model did not run the registered layer";
  sluice_model_destroy(m);
  sluice_trainer_destroy(t);
}

TEST(InferenceModel, MisuseIsRefusedWithDocumentedStatuses) {
  sluice_model* m = nullptr;
  EXPECT_EQ(sluice_model_load(nullptr, &m), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(m, nullptr);
  const std::string missing = fresh_dir("model_missing") + "/nothing.h5";
  EXPECT_EQ(sluice_model_load(missing.c_str(), &m), SLUICE_ERROR_CHECKPOINT);
  EXPECT_NE(std::string(sluice_last_error()).find("nothing.h5"), std::string::npos) << sluice_last_error();
  EXPECT_EQ(m, nullptr);
  ASSERT_SLUICE_OK(sluice_model_create(&m));
  int64_t in = 0, out = 0;
  EXPECT_EQ(sluice_model_features(m, &in, &out), SLUICE_ERROR_STATE);
  float x[kInputs] = {0}, y[kOutputs] = {0};
  EXPECT_EQ(sluice_model_predict(m, x, y, 1), SLUICE_ERROR_STATE);
  sluice_layer_ops ops = SLUICE_LAYER_OPS_INIT;
  EXPECT_EQ(sluice_model_register_layer(m, "x", &ops, nullptr), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sluice_last_error()).find("forward"), std::string::npos) << sluice_last_error();
  sluice_model_destroy(m);
  EXPECT_EQ(sluice_model_predict(m, x, y, 1), SLUICE_ERROR_INVALID_ARGUMENT);
  sluice_model_destroy(nullptr);
}

}  // namespace
