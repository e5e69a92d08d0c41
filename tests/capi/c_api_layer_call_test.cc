// sluice_layer_call_info: a custom layer's callbacks (plain C, shape_reading_callback.c) learn their shapes from
// the library rather than from user_data. One set of callbacks registered once serves two layers of the model;
// each call is told its in/out features, the micro-batch's rows (equal to the callback's batch argument), the
// parameter count, the layer's index and name, in a trainer's steps and predictions and in a sluice_model. Outside a
// callback the call is a STATE error; NULL and a missing SLUICE_LAYER_CALL_INIT are INVALID_ARGUMENT. One rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <sluice/sluice.h>

#include "tests/capi/shape_reading_callback.h"

namespace {

constexpr int64_t kFeatures = 4;
constexpr int64_t kOutputs = 2;
constexpr int64_t kBatch = 8;
constexpr int64_t kMicrobatches = 4;

// Two custom layers backed by the same registration, then a built-in linear one.
const char* kConfig =
    "model:\n  inputs: 4\n  layers:\n    - {type: custom, name: scale}\n    - {type: custom, name: scale}\n"
    "    - {type: linear, outputs: 2}\n"
    "pipeline: {stages: 1, schedule: 1f1b, microbatches: 4}\n"
    "optimizer: {type: sgd, lr: 0.1}\ndata: {type: external, batch: 8}\n";

struct Fixture {
  std::unique_ptr<shape_log> log = std::make_unique<shape_log>();
  sluice_trainer* trainer = nullptr;
  std::vector<float> inputs = std::vector<float>(kBatch * kFeatures);
  std::vector<float> targets = std::vector<float>(kBatch * kOutputs);

  Fixture() {
    log->count = 0;
    for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
    for (size_t i = 0; i < targets.size(); ++i) targets[i] = 0.2f * static_cast<float>(i % 3);
    EXPECT_EQ(sluice_trainer_create(MPI_COMM_WORLD, kConfig, &trainer), SLUICE_OK) << sluice_last_error();
    const sluice_layer_ops ops = shape_reading_ops(kFeatures);
    EXPECT_EQ(sluice_trainer_register_layer(trainer, "scale", &ops, log.get()), SLUICE_OK) << sluice_last_error();
    EXPECT_EQ(sluice_trainer_start(trainer), SLUICE_OK) << sluice_last_error();
  }
  ~Fixture() { sluice_trainer_destroy(trainer); }
};

// Every logged call was answered, with this layer's sizes and the callback's own batch as rows.
void expect_shapes_answered(const shape_log& log) {
  ASSERT_GT(log.count, 0) << "no callback ran";
  for (int64_t i = 0; i < log.count; ++i) {
    const shape_log_entry& e = log.entries[i];
    SCOPED_TRACE("call " + std::to_string(i) + " (" + e.callback + ")");
    ASSERT_EQ(e.status, SLUICE_OK) << "sluice_layer_call_info failed inside a callback";
    EXPECT_EQ(e.call.struct_size, sizeof(sluice_layer_call));
    EXPECT_EQ(e.call.in_features, kFeatures);
    EXPECT_EQ(e.call.out_features, kFeatures);
    EXPECT_EQ(e.call.num_params, 1);
    EXPECT_EQ(e.call.rows, e.batch);
    EXPECT_EQ(std::string(e.name), "scale");
    EXPECT_TRUE(e.call.layer == 0 || e.call.layer == 1) << "layer " << e.call.layer;
  }
}

TEST(LayerCallInfo, TrainStepTellsEveryCallbackItsShapes) {
  Fixture f;
  float loss = 0;
  ASSERT_EQ(sluice_train_step(f.trainer, f.inputs.data(), f.targets.data(), kBatch, &loss), SLUICE_OK)
      << sluice_last_error();
  expect_shapes_answered(*f.log);
  std::set<char> callbacks;
  std::set<int64_t> layers;
  for (int64_t i = 0; i < f.log->count; ++i) {
    callbacks.insert(f.log->entries[i].callback);
    layers.insert(f.log->entries[i].call.layer);
    EXPECT_EQ(f.log->entries[i].call.rows, kBatch / kMicrobatches);
  }
  EXPECT_EQ(callbacks, (std::set<char>{'f', 'i', 'w'}));
  EXPECT_EQ(layers, (std::set<int64_t>{0, 1})) << "one registration serves both layers, each told its index";
}

// A batch that is not a multiple of the micro-batches: each call's rows are its own, and they add up to the batch.
TEST(LayerCallInfo, PredictRowsFollowTheMicroBatches) {
  Fixture f;
  constexpr int64_t kOddBatch = 6;
  std::vector<float> outputs(kOddBatch * kOutputs, -1.0f);
  ASSERT_EQ(sluice_predict(f.trainer, f.inputs.data(), outputs.data(), kOddBatch), SLUICE_OK) << sluice_last_error();
  expect_shapes_answered(*f.log);
  int64_t rows_of_layer[2] = {0, 0};
  for (int64_t i = 0; i < f.log->count; ++i) {
    rows_of_layer[f.log->entries[i].call.layer] += f.log->entries[i].call.rows;
  }
  EXPECT_EQ(rows_of_layer[0], kOddBatch);
  EXPECT_EQ(rows_of_layer[1], kOddBatch);
}

TEST(LayerCallInfo, InferenceModelCallbacksAreAnsweredToo) {
  Fixture f;
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/layer_call.h5";
  ASSERT_EQ(sluice_save_checkpoint(f.trainer, path.c_str()), SLUICE_OK) << sluice_last_error();
  auto model_log = std::make_unique<shape_log>();
  model_log->count = 0;
  sluice_model* model = nullptr;
  ASSERT_EQ(sluice_model_create(&model), SLUICE_OK) << sluice_last_error();
  const sluice_layer_ops ops = shape_reading_ops(kFeatures);
  EXPECT_EQ(sluice_model_register_layer(model, "scale", &ops, model_log.get()), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(sluice_model_load_checkpoint(model, path.c_str()), SLUICE_OK) << sluice_last_error();
  std::vector<float> outputs(kBatch * kOutputs);
  EXPECT_EQ(sluice_model_predict(model, f.inputs.data(), outputs.data(), kBatch), SLUICE_OK) << sluice_last_error();
  sluice_model_destroy(model);
  expect_shapes_answered(*model_log);
}

TEST(LayerCallInfo, OutsideACallbackIsAStateError) {
  sluice_layer_call call = SLUICE_LAYER_CALL_INIT;
  EXPECT_EQ(sluice_layer_call_info(&call), SLUICE_ERROR_STATE);
  EXPECT_NE(std::string(sluice_last_error()).find("not inside a layer callback"), std::string::npos)
      << sluice_last_error();
  Fixture f;  // also after a trainer ran callbacks: the scope ended with them
  float loss = 0;
  ASSERT_EQ(sluice_train_step(f.trainer, f.inputs.data(), f.targets.data(), kBatch, &loss), SLUICE_OK);
  EXPECT_EQ(sluice_layer_call_info(&call), SLUICE_ERROR_STATE);
}

TEST(LayerCallInfo, RefusesNullAndAMissingInitializer) {
  EXPECT_EQ(sluice_layer_call_info(nullptr), SLUICE_ERROR_INVALID_ARGUMENT);
  sluice_layer_call unsized{};
  EXPECT_EQ(sluice_layer_call_info(&unsized), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sluice_last_error()).find("sluice_layer_call::struct_size is 0"), std::string::npos)
      << sluice_last_error();
}

}  // namespace
