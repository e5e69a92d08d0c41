// Non-finite values are refused where they enter the C API, naming the array, the sample or index and the rank,
// and nothing is kept or changed (2 ranks, 2 stages, AdamW): a NaN/Inf sample handed to sluice_submit_samples
// (INVALID_ARGUMENT, nothing held: it would otherwise be saved and fail every later sluice_train_submitted),
// NaN/Inf values for sluice_set_layer_params (INVALID_ARGUMENT, parameters unchanged), a loss whose mean overflows
// the float the API returns (NUMERIC, no update), and NaN inputs to sluice_predict / Inf targets to
// sluice_evaluate (NUMERIC, as sluice_train_step refuses them), and callbacks that write NaN/Inf: a custom layer's
// forward or input gradient, a custom loss's sum or gradient (NUMERIC naming the layer or the loss callback).
// After each refusal the trainer keeps working.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <libdeflate.h>
#include <mpi.h>

#include <sluice/sluice.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "tests/capi/linear_callback.h"
#include "tests/capi/run_test_support.h"

namespace {

constexpr int kInputs = 4, kOutputs = 3, kBatch = 4;
const float kNan = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

using sluice::testing::world_rank;
using sluice::testing::world_size;

const std::string kConfig =
    "model:\n  inputs: 4\n  layers:\n    - {type: linear, outputs: 6}\n    - {type: relu}\n"
    "    - {type: linear, outputs: 3}\n"
    "pipeline: {stages: 2, schedule: 1f1b, microbatches: 2}\n"
    "optimizer: {type: adamw, lr: 0.01}\ndata: {type: external, batch: 4}\nseed: 3\n";

struct Samples {
  std::vector<float> x, y;
  explicit Samples(int count) : x(count * kInputs), y(count * kOutputs) {
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.37 * i));
    for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(std::cos(0.71 * i));
  }
};

void expect_everywhere(sluice_status got, sluice_status expected, const std::vector<std::string>& needles) {
  EXPECT_EQ(got, expected) << sluice_last_error();
  for (const std::string& needle : needles) {
    EXPECT_NE(std::string(sluice_last_error()).find(needle), std::string::npos)
        << "'" << needle << "' not in: " << sluice_last_error();
  }
}

std::vector<float> layer_params(sluice_trainer* t, int layer) {
  int64_t count = 0;
  EXPECT_EQ(sluice_layer_param_count(t, layer, &count), SLUICE_OK) << sluice_last_error();
  std::vector<float> values(static_cast<size_t>(count));
  EXPECT_EQ(sluice_get_layer_params(t, layer, values.data(), count), SLUICE_OK) << sluice_last_error();
  return values;
}

TEST(CApiNonFinite, SubmitRefusesANonFiniteSampleAndKeepsNothing) {
  sluice_trainer* t = sluice::testing::started_trainer(kConfig);
  const bool last = world_rank() == world_size() - 1;
  Samples bad_inputs(3);
  if (last) bad_inputs.x[1 * kInputs + 2] = kNan;  // sample 1, feature 2, on the last rank only
  expect_everywhere(sluice_submit_samples(t, bad_inputs.x.data(), bad_inputs.y.data(), 3),
                    SLUICE_ERROR_INVALID_ARGUMENT,
                    {"non-finite value (nan) in the inputs of sample 1 (feature 2)",
                     "rank " + std::to_string(world_size() - 1)});
  Samples bad_targets(2);
  if (world_rank() == 0) bad_targets.y[0 * kOutputs + 1] = -kInf;
  expect_everywhere(sluice_submit_samples(t, bad_targets.x.data(), bad_targets.y.data(), 2),
                    SLUICE_ERROR_INVALID_ARGUMENT, {"(-inf) in the targets of sample 0 (feature 1)", "rank 0"});
  int64_t held = -1;
  ASSERT_SLUICE_OK(sluice_submitted_count(t, &held));
  EXPECT_EQ(held, 0);  // nothing of a refused call is kept
  // Still usable: good samples train.
  const Samples good(kBatch);
  ASSERT_SLUICE_OK(sluice_submit_samples(t, good.x.data(), good.y.data(), world_rank() == 0 ? kBatch : 0));
  float loss = NAN;
  ASSERT_SLUICE_OK(sluice_train_submitted(t, kBatch, &loss));
  EXPECT_TRUE(std::isfinite(loss));
  sluice_trainer_destroy(t);
}

TEST(CApiNonFinite, SetLayerParamsRefusesNanAndInfAndChangesNothing) {
  sluice_trainer* t = sluice::testing::started_trainer(kConfig);
  for (int layer : {0, 2}) {  // one on each rank's stage
    const std::vector<float> before = layer_params(t, layer);
    for (float poison : {kNan, kInf}) {
      std::vector<float> values = before;
      values[3] = poison;
      expect_everywhere(sluice_set_layer_params(t, layer, values.data(), static_cast<int64_t>(values.size())),
                        SLUICE_ERROR_INVALID_ARGUMENT,
                        {"the values for layer " + std::to_string(layer) + " at index 3", "parameters unchanged"});
      EXPECT_EQ(layer_params(t, layer), before) << "layer " << layer;
    }
  }
  sluice_trainer_destroy(t);
}

TEST(CApiNonFinite, LossOverflowingTheReturnedFloatFailsTheStepWithNothingApplied) {
  sluice_trainer* t = sluice::testing::started_trainer(kConfig);
  Samples huge(kBatch);
  for (float& v : huge.y) v = 1e20f;  // squared error ~1e40: finite in double, inf as the float *loss
  const std::vector<float> before0 = layer_params(t, 0), before2 = layer_params(t, 2);
  float loss = 0.0f;
  expect_everywhere(sluice_train_step(t, huge.x.data(), huge.y.data(), kBatch, &loss), SLUICE_ERROR_NUMERIC,
                    {"loss", "overflows a float"});
  EXPECT_EQ(layer_params(t, 0), before0);
  EXPECT_EQ(layer_params(t, 2), before2);
  sluice_stats stats = SLUICE_STATS_INIT;
  ASSERT_SLUICE_OK(sluice_trainer_stats(t, &stats));
  EXPECT_EQ(stats.steps, 0);
  const Samples good(kBatch);
  ASSERT_SLUICE_OK(sluice_train_step(t, good.x.data(), good.y.data(), kBatch, &loss));
  EXPECT_TRUE(std::isfinite(loss));
  sluice_trainer_destroy(t);
}

TEST(CApiNonFinite, PredictAndEvaluateRefuseNonFiniteData) {
  sluice_trainer* t = sluice::testing::started_trainer(kConfig);
  Samples data(kBatch);
  std::vector<float> out(kBatch * kOutputs, 0.0f);
  data.x[2 * kInputs + 3] = kNan;
  expect_everywhere(sluice_predict(t, data.x.data(), out.data(), kBatch), SLUICE_ERROR_NUMERIC,
                    {"non-finite value (nan) in the inputs of sample 2 (feature 3)", "rank 0"});
  const Samples good(kBatch);
  Samples bad_targets(kBatch);
  bad_targets.y[1 * kOutputs] = kInf;
  float loss = 0.0f;
  expect_everywhere(sluice_evaluate(t, good.x.data(), bad_targets.y.data(), kBatch, &loss), SLUICE_ERROR_NUMERIC,
                    {"(inf) in the targets of sample 1 (feature 0)", "rank " + std::to_string(world_size() - 1)});
  ASSERT_SLUICE_OK(sluice_predict(t, good.x.data(), out.data(), kBatch));
  ASSERT_SLUICE_OK(sluice_evaluate(t, good.x.data(), good.y.data(), kBatch, &loss));
  EXPECT_TRUE(std::isfinite(loss));
  sluice_trainer_destroy(t);
}

// Writes a NaN into element `index` of the float32 dataset `path` and recomputes its crc32 by the documented
// version-2 recipe (libdeflate's CRC-32 over "<path>|float32|<dims>" then the bytes), as a forger would.
void forge_nan(const std::string& file, const std::string& path, size_t index) {
  // Saves leave checkpoints read-only.
  std::filesystem::permissions(file, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
  const hid_t h = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(h, 0) << file;
  const hid_t dataset = H5Dopen2(h, path.c_str(), H5P_DEFAULT);
  ASSERT_GE(dataset, 0) << path;
  const hid_t space = H5Dget_space(dataset);
  std::vector<hsize_t> dims(static_cast<size_t>(H5Sget_simple_extent_ndims(space)));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  std::vector<float> values(static_cast<size_t>(H5Sget_simple_extent_npoints(space)));
  ASSERT_GE(H5Dread(dataset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
  values.at(index) = kNan;
  ASSERT_GE(H5Dwrite(dataset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
  std::string header = path + "|float32|";
  for (size_t d = 0; d < dims.size(); ++d) header += (d ? "," : "") + std::to_string(dims[d]);
  uint32_t crc = libdeflate_crc32(libdeflate_crc32(0, header.data(), header.size()), values.data(),
                                  values.size() * sizeof(float));
  H5Adelete(dataset, "crc32");
  const hid_t scalar = H5Screate(H5S_SCALAR);
  const hid_t attribute = H5Acreate2(dataset, "crc32", H5T_STD_U32LE, scalar, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(attribute, H5T_NATIVE_UINT32, &crc);
  H5Aclose(attribute);
  H5Sclose(scalar);
  H5Sclose(space);
  H5Dclose(dataset);
  H5Fclose(h);
}

// Held samples come back with a load: one that is not finite (a forged or old file) is refused like a submitted
// one, naming the dataset and the sample; the trainer keeps what it held.
TEST(CApiNonFinite, CheckpointWithANonFiniteHeldSampleIsRefusedOnLoad) {
  sluice_trainer* t = sluice::testing::started_trainer(kConfig);
  const Samples good(kBatch);
  ASSERT_SLUICE_OK(sluice_submit_samples(t, good.x.data(), good.y.data(), world_rank() == 0 ? kBatch : 0));
  const std::string file = sluice::testing::fresh_dir("non_finite_samples") + ".h5";
  ASSERT_SLUICE_OK(sluice_save_checkpoint(t, file.c_str()));
  ASSERT_SLUICE_OK(sluice_load_checkpoint(t, file.c_str()));  // the unforged file loads
  MPI_Barrier(MPI_COMM_WORLD);  // every rank has closed the file (HDF5 locks it while open)
  if (world_rank() == 0) forge_nan(file, "/samples/inputs", 2 * kInputs + 1);
  MPI_Barrier(MPI_COMM_WORLD);
  expect_everywhere(sluice_load_checkpoint(t, file.c_str()), SLUICE_ERROR_CHECKPOINT,
                    {"dataset /samples/inputs", "non-finite value (nan) in the inputs of sample 2 (feature 1)"});
  int64_t held = -1;
  ASSERT_SLUICE_OK(sluice_submitted_count(t, &held));
  EXPECT_EQ(held, kBatch);
  sluice_trainer_destroy(t);
}

// A registered array whose count cannot describe the caller's memory (bytes overflow 64 bits, or more than a
// process can address) is refused at registration, naming it, before any save copies past its end.
TEST(CApiNonFinite, RegisteredStateWithAnImpossibleCountIsRefused) {
  sluice_trainer* t = sluice::testing::started_trainer(kConfig);
  double field[4] = {1, 2, 3, 4};
  for (int64_t count : {std::numeric_limits<int64_t>::max() / 4, int64_t{1} << 45}) {
    EXPECT_EQ(sluice_register_state(t, "field", field, SLUICE_FLOAT64, count, SLUICE_STATE_PER_RANK),
              SLUICE_ERROR_INVALID_ARGUMENT)
        << count;
    EXPECT_NE(std::string(sluice_last_error()).find("application state 'field': count"), std::string::npos)
        << sluice_last_error();
  }
  ASSERT_SLUICE_OK(sluice_register_state(t, "field", field, SLUICE_FLOAT64, 4, SLUICE_STATE_PER_RANK));
  sluice_trainer_destroy(t);
}

// A custom layer (linear_callback.c, 6 -> 6) that can be told to write a NaN into its outputs or input gradient.
struct PoisonableLayer {
  linear_callback inner{6, 6, 0};
  sluice_layer_ops ops = linear_callback_ops(&inner);
  bool poison_forward = false, poison_backward = false;
};

int poisoned_forward(void* u, const float* p, const float* x, float* y, int64_t batch) {
  auto* layer = static_cast<PoisonableLayer*>(u);
  const int rc = layer->ops.forward(&layer->inner, p, x, y, batch);
  if (layer->poison_forward) y[batch * 6 - 1] = kNan;
  return rc;
}
int poisoned_backward_input(void* u, const float* p, const float* x, const float* dy, float* dx, int64_t batch) {
  auto* layer = static_cast<PoisonableLayer*>(u);
  const int rc = layer->ops.backward_input(&layer->inner, p, x, dy, dx, batch);
  if (layer->poison_backward) dx[0] = kInf;
  return rc;
}
int passed_backward_weight(void* u, const float* p, const float* x, const float* dy, float* grads, int64_t batch) {
  auto* layer = static_cast<PoisonableLayer*>(u);
  return layer->ops.backward_weight(&layer->inner, p, x, dy, grads, batch);
}

TEST(CApiNonFinite, CustomLayerWritingNanOrInfIsNamed) {
  const std::string config =
      "model:\n  inputs: 4\n  layers:\n    - {type: linear, outputs: 6}\n    - {type: custom, name: lin}\n"
      "    - {type: tanh}\n    - {type: linear, outputs: 3}\n"
      "pipeline: {stages: 2, schedule: 1f1b, microbatches: 2, split: [2, 2]}\n"
      "optimizer: {type: adamw, lr: 0.01}\ndata: {type: external, batch: 4}\nseed: 3\n";
  PoisonableLayer layer;
  std::vector<float> initial(static_cast<size_t>(layer.ops.num_params));
  for (size_t i = 0; i < initial.size(); ++i) initial[i] = static_cast<float>(0.2 * std::cos(0.9 * i));
  sluice_layer_ops ops = layer.ops;
  ops.initial_params = initial.data();
  ops.forward = poisoned_forward;
  ops.backward_input = poisoned_backward_input;
  ops.backward_weight = passed_backward_weight;
  sluice_trainer* t = nullptr;
  ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, config.c_str(), &t));
  ASSERT_SLUICE_OK(sluice_trainer_register_layer(t, "lin", &ops, &layer));
  ASSERT_SLUICE_OK(sluice_trainer_start(t));
  const Samples good(kBatch);
  std::vector<float> out(kBatch * kOutputs);
  float loss = 0.0f;
  layer.poison_forward = true;
  expect_everywhere(sluice_train_step(t, good.x.data(), good.y.data(), kBatch, &loss), SLUICE_ERROR_NUMERIC,
                    {"custom layer 'lin' (model.layers[1]): forward wrote a non-finite value (nan) in the outputs",
                     "from finite arguments"});
  expect_everywhere(sluice_predict(t, good.x.data(), out.data(), kBatch), SLUICE_ERROR_NUMERIC,
                    {"custom layer 'lin' (model.layers[1]): forward"});
  layer.poison_forward = false;
  layer.poison_backward = true;
  expect_everywhere(sluice_train_step(t, good.x.data(), good.y.data(), kBatch, &loss), SLUICE_ERROR_NUMERIC,
                    {"custom layer 'lin' (model.layers[1]): backward_input wrote a non-finite value (inf) in the "
                     "input gradient of sample 0 (feature 0)"});
  layer.poison_backward = false;
  ASSERT_SLUICE_OK(sluice_train_step(t, good.x.data(), good.y.data(), kBatch, &loss));
  sluice_stats stats = SLUICE_STATS_INIT;
  ASSERT_SLUICE_OK(sluice_trainer_stats(t, &stats));
  EXPECT_EQ(stats.steps, 1);  // the refused steps applied nothing
  sluice_trainer_destroy(t);
}

// A custom loss whose sum or gradient is not finite (for finite predictions).
struct PoisonableLoss {
  int mode = 0;  // 0: fine, 1: NaN sum, 2: Inf in the gradient
};

int poisonable_mse(void* u, const float* prediction, const float* targets, int64_t rows, int64_t cols,
                   int64_t global_batch, double* sum, float* grad) {
  const int mode = static_cast<PoisonableLoss*>(u)->mode;
  *sum = 0.0;
  for (int64_t i = 0; i < rows * cols; ++i) {
    const double d = prediction[i] - targets[i];
    *sum += d * d / static_cast<double>(cols);
    grad[i] = static_cast<float>(2.0 * d / static_cast<double>(global_batch * cols));
  }
  if (mode == 1) *sum = NAN;
  if (mode == 2) grad[rows * cols - 1] = kInf;
  return 0;
}

TEST(CApiNonFinite, CustomLossReturningNanOrInfIsNamed) {
  std::string config = kConfig;
  config.replace(config.find("data:"), 0, "loss: custom\n");
  PoisonableLoss state;
  sluice_loss_ops ops = SLUICE_LOSS_OPS_INIT;
  ops.user_data = &state;
  ops.loss = poisonable_mse;
  sluice_trainer* t = nullptr;
  ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, config.c_str(), &t));
  ASSERT_SLUICE_OK(sluice_trainer_register_loss(t, &ops));
  ASSERT_SLUICE_OK(sluice_trainer_start(t));
  const Samples good(kBatch);
  float loss = 0.0f;
  state.mode = 1;
  expect_everywhere(sluice_train_step(t, good.x.data(), good.y.data(), kBatch, &loss), SLUICE_ERROR_NUMERIC,
                    {"loss callback (loss: custom) returned a non-finite loss sum"});
  state.mode = 2;
  expect_everywhere(sluice_train_step(t, good.x.data(), good.y.data(), kBatch, &loss), SLUICE_ERROR_NUMERIC,
                    {"loss callback (loss: custom) returned a non-finite value (inf) in the gradient of sample 1"});
  state.mode = 0;
  ASSERT_SLUICE_OK(sluice_train_step(t, good.x.data(), good.y.data(), kBatch, &loss));
  EXPECT_TRUE(std::isfinite(loss));
  sluice_trainer_destroy(t);
}

}  // namespace
