// sluice_trainer_input_shape / _output_shape and sluice_model_input_shape / _output_shape (1 rank): fields in C
// order as model.inputs gives them and as the layers make them, rows as [F], a custom layer's output as rows of its
// registered width, the saved model's shapes equal to the trainer's, and the listed errors.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <sluice/sluice.h>

#include "tests/capi/misuse_test_support.h"

namespace {

using capi_test::kFeatures;
using capi_test::scale_ops;

const char* kFieldConfig =
    "model:\n  inputs: [2, 8, 6]\n  layers:\n"
    "    - {type: conv, channels: 4, kernel: 3, padding: periodic}\n"
    "    - {type: relu}\n"
    "    - {type: pool, mode: avg, kernel: 2}\n"
    "pipeline: {stages: 1, schedule: 1f1b, microbatches: 2}\n"
    "optimizer: {type: sgd, lr: 0.01}\ndata: {type: external, batch: 4}\n";

const char* kRowsConfig =
    "model:\n  inputs: 4\n  layers:\n    - {type: custom, name: scale}\n    - {type: linear, outputs: 3}\n"
    "pipeline: {stages: 1, schedule: 1f1b, microbatches: 2}\n"
    "optimizer: {type: sgd, lr: 0.01}\ndata: {type: external, batch: 4}\n";

sluice_trainer* create(const char* yaml) {
  sluice_trainer* t = nullptr;
  EXPECT_EQ(sluice_trainer_create(MPI_COMM_WORLD, yaml, &t), SLUICE_OK) << sluice_last_error();
  return t;
}

std::vector<int64_t> shape_of(sluice_status (*get)(const sluice_trainer*, int64_t*, int*), const sluice_trainer* t) {
  int64_t dims[SLUICE_MAX_SAMPLE_DIMS] = {0};
  int rank = -1;
  EXPECT_EQ(get(t, dims, &rank), SLUICE_OK) << sluice_last_error();
  return std::vector<int64_t>(dims, dims + (rank > 0 ? rank : 0));
}

std::vector<int64_t> model_shape_of(sluice_status (*get)(const sluice_model*, int64_t*, int*), const sluice_model* m) {
  int64_t dims[SLUICE_MAX_SAMPLE_DIMS] = {0};
  int rank = -1;
  EXPECT_EQ(get(m, dims, &rank), SLUICE_OK) << sluice_last_error();
  return std::vector<int64_t>(dims, dims + (rank > 0 ? rank : 0));
}

TEST(SampleShape, FieldsInCOrderBeforeAndAfterStart) {
  sluice_trainer* t = create(kFieldConfig);
  EXPECT_EQ(shape_of(sluice_trainer_input_shape, t), (std::vector<int64_t>{2, 8, 6}));
  EXPECT_EQ(shape_of(sluice_trainer_output_shape, t), (std::vector<int64_t>{4, 4, 3}));
  ASSERT_EQ(sluice_trainer_start(t), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(shape_of(sluice_trainer_input_shape, t), (std::vector<int64_t>{2, 8, 6}));
  EXPECT_EQ(shape_of(sluice_trainer_output_shape, t), (std::vector<int64_t>{4, 4, 3}));

  // The inference model of its checkpoint has the same shapes.
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/sample_shape.h5";
  ASSERT_EQ(sluice_save_checkpoint(t, path.c_str()), SLUICE_OK) << sluice_last_error();
  sluice_trainer_destroy(t);
  sluice_model* m = nullptr;
  ASSERT_EQ(sluice_model_load(path.c_str(), &m), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(model_shape_of(sluice_model_input_shape, m), (std::vector<int64_t>{2, 8, 6}));
  EXPECT_EQ(model_shape_of(sluice_model_output_shape, m), (std::vector<int64_t>{4, 4, 3}));
  int64_t dims[SLUICE_MAX_SAMPLE_DIMS];
  EXPECT_EQ(sluice_model_output_shape(m, dims, nullptr), SLUICE_ERROR_INVALID_ARGUMENT);
  sluice_model_destroy(m);
}

TEST(SampleShape, RowsAndCustomLayers) {
  sluice_trainer* t = create(kRowsConfig);
  EXPECT_EQ(shape_of(sluice_trainer_input_shape, t), (std::vector<int64_t>{4}));
  int64_t dims[SLUICE_MAX_SAMPLE_DIMS];
  int rank = 0;
  // The output depends on the custom layer's width, unknown until it is registered.
  EXPECT_EQ(sluice_trainer_output_shape(t, dims, &rank), SLUICE_ERROR_CONFIG);
  EXPECT_NE(std::string(sluice_last_error()).find("not registered yet"), std::string::npos) << sluice_last_error();
  const sluice_layer_ops ops = scale_ops();
  ASSERT_EQ(sluice_trainer_register_layer(t, "scale", &ops, nullptr), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(shape_of(sluice_trainer_output_shape, t), (std::vector<int64_t>{3}));
  ASSERT_EQ(kFeatures, 4);
  sluice_trainer_destroy(t);
}

TEST(SampleShape, ListedErrors) {
  int64_t dims[SLUICE_MAX_SAMPLE_DIMS];
  int rank = 0;
  EXPECT_EQ(sluice_trainer_input_shape(nullptr, dims, &rank), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(sluice_trainer_output_shape(nullptr, dims, &rank), SLUICE_ERROR_INVALID_ARGUMENT);
  sluice_trainer* t = create(kFieldConfig);
  EXPECT_EQ(sluice_trainer_input_shape(t, nullptr, &rank), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(sluice_trainer_output_shape(t, dims, nullptr), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sluice_last_error()).find("NULL"), std::string::npos) << sluice_last_error();
  sluice_trainer_destroy(t);
  EXPECT_EQ(sluice_model_input_shape(nullptr, dims, &rank), SLUICE_ERROR_INVALID_ARGUMENT);
  sluice_model* empty = nullptr;
  ASSERT_EQ(sluice_model_create(&empty), SLUICE_OK);
  EXPECT_EQ(sluice_model_input_shape(empty, dims, &rank), SLUICE_ERROR_STATE);
  EXPECT_EQ(sluice_model_output_shape(empty, dims, &rank), SLUICE_ERROR_STATE);
  sluice_model_destroy(empty);
}

}  // namespace
