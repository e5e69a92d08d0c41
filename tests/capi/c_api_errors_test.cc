// Misuse of the C API: every entry point answers NULLs, bad sizes, bad YAML, calls out of order and failing
// callbacks with the documented status and a message naming the problem -- never a crash, an abort or a hang.
// Runs with 1 and 2 ranks (the pipeline has as many stages as ranks), also under valgrind.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <string>
#include <vector>

#include <sluice/sluice.h>

#include "tests/capi/misuse_test_support.h"

namespace {

using namespace capi_test;  // NOLINT: the shared rank helpers, sizes, scale layer and data of these tests

// One stage per rank. With 2 ranks the custom layer (when used) is alone on stage 0, i.e. on rank 0 only.
std::string config_with(const std::string& first_layer) {
  const std::string split = world_size() == 1 ? "[2]" : "[1, 1]";
  return "model:\n"
         "  inputs: " + std::to_string(kFeatures) + "\n"
         "  layers:\n"
         "    - " + first_layer + "\n"
         "    - {type: linear, outputs: " + std::to_string(kOutputs) + "}\n"
         "pipeline: {stages: " + std::to_string(world_size()) + ", schedule: 1f1b, microbatches: " +
         std::to_string(kMicrobatches) + ", split: " + split + "}\n"
         "optimizer: {type: sgd, lr: 0.1}\n"
         "data: {type: external, batch: " + std::to_string(kBatch) + "}\n";
}

const std::string kPlainConfigLayer = "{type: linear, outputs: 4}";

// Status and message of the call, checked together so a failure shows both.
#define EXPECT_STATUS(call, status, fragment)                                                          \
  do {                                                                                                 \
    const sluice_status actual_ = (call);                                                              \
    const std::string message_ = sluice_last_error();                                                  \
    EXPECT_EQ(actual_, (status)) << #call << " -> " << sluice_status_string(actual_) << ": " << message_; \
    EXPECT_NE(message_.find(fragment), std::string::npos)                                              \
        << #call << ": message \"" << message_ << "\" does not mention \"" << (fragment) << "\"";      \
  } while (0)

#define ASSERT_SLUICE_OK(call) ASSERT_EQ((call), SLUICE_OK) << #call << ": " << sluice_last_error()


// A created (not started) trainer, destroyed at the end of the test.
class Trainer : public ::testing::Test {
 protected:
  void create(const std::string& config) {
    ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, config.c_str(), &trainer_));
  }
  void TearDown() override { sluice_trainer_destroy(trainer_); }
  sluice_trainer* trainer_ = nullptr;
  Data data_;
};

TEST(StatusString, NamesEveryStatusAndAnUnknownOne) {
  const std::vector<std::pair<sluice_status, std::string>> names = {
      {SLUICE_OK, "SLUICE_OK"},
      {SLUICE_ERROR_INVALID_ARGUMENT, "SLUICE_ERROR_INVALID_ARGUMENT"},
      {SLUICE_ERROR_CONFIG, "SLUICE_ERROR_CONFIG"},
      {SLUICE_ERROR_STATE, "SLUICE_ERROR_STATE"},
      {SLUICE_ERROR_UNSUPPORTED, "SLUICE_ERROR_UNSUPPORTED"},
      {SLUICE_ERROR_COMM, "SLUICE_ERROR_COMM"},
      {SLUICE_ERROR_CUDA, "SLUICE_ERROR_CUDA"},
      {SLUICE_ERROR_IO, "SLUICE_ERROR_IO"},
      {SLUICE_ERROR_CHECKPOINT, "SLUICE_ERROR_CHECKPOINT"},
      {SLUICE_ERROR_TIMEOUT, "SLUICE_ERROR_TIMEOUT"},
      {SLUICE_ERROR_CALLBACK, "SLUICE_ERROR_CALLBACK"},
      {SLUICE_ERROR_INTERNAL, "SLUICE_ERROR_INTERNAL"},
      {SLUICE_ERROR_NUMERIC, "SLUICE_ERROR_NUMERIC"},
  };
  for (const auto& [status, name] : names) {
    EXPECT_EQ(std::string(sluice_status_string(status)).rfind(name + ":", 0), 0u) << sluice_status_string(status);
  }
  EXPECT_EQ(std::string(sluice_status_string(static_cast<sluice_status>(42))).rfind("SLUICE_ERROR_UNKNOWN", 0), 0u);
}

TEST(Create, RejectsNullArgumentsAndClearsOut) {
  int not_a_trainer = 0;
  sluice_trainer* out = reinterpret_cast<sluice_trainer*>(&not_a_trainer);  // must be overwritten with NULL
  EXPECT_STATUS(sluice_trainer_create(MPI_COMM_WORLD, nullptr, &out), SLUICE_ERROR_INVALID_ARGUMENT,
                "config is NULL");
  EXPECT_EQ(out, nullptr);
  EXPECT_STATUS(sluice_trainer_create(MPI_COMM_WORLD, config_with(kPlainConfigLayer).c_str(), nullptr),
                SLUICE_ERROR_INVALID_ARGUMENT, "out (sluice_trainer**) is NULL");
  EXPECT_STATUS(sluice_trainer_create(MPI_COMM_NULL, config_with(kPlainConfigLayer).c_str(), &out),
                SLUICE_ERROR_INVALID_ARGUMENT, "MPI_COMM_NULL");
  EXPECT_STATUS(sluice_trainer_create_f(MPI_Comm_c2f(MPI_COMM_NULL), config_with(kPlainConfigLayer).c_str(), &out),
                SLUICE_ERROR_INVALID_ARGUMENT, "MPI_COMM_NULL");
  EXPECT_EQ(out, nullptr);
}

TEST(Create, RejectsBadYamlNamingTheKey) {
  sluice_trainer* out = nullptr;
  EXPECT_STATUS(sluice_trainer_create(MPI_COMM_WORLD, "model: [1, 2", &out), SLUICE_ERROR_CONFIG, "config");
  const std::string bad_stages =
      "model: {inputs: 4, layers: [{type: linear, outputs: 2}]}\npipeline: {stages: four}\n";
  EXPECT_STATUS(sluice_trainer_create(MPI_COMM_WORLD, bad_stages.c_str(), &out), SLUICE_ERROR_CONFIG,
                "pipeline.stages");
  const std::string unknown_layer = "model: {inputs: 4, layers: [{type: linearr, outputs: 2}]}\n";
  EXPECT_STATUS(sluice_trainer_create(MPI_COMM_WORLD, unknown_layer.c_str(), &out), SLUICE_ERROR_CONFIG, "linearr");
  EXPECT_EQ(out, nullptr);
}

TEST(NullHandle, EveryEntryPointRejectsIt) {
  const char* const kNull = "trainer handle is NULL";
  const sluice_layer_ops ops = scale_ops();
  Data data;
  std::vector<float> outputs(kBatch * kOutputs);
  float loss = 0;
  sluice_stats stats = SLUICE_STATS_INIT;
  int64_t in = 0, out = 0;
  EXPECT_STATUS(sluice_trainer_register_layer(nullptr, "scale", &ops, nullptr), SLUICE_ERROR_INVALID_ARGUMENT, kNull);
  EXPECT_STATUS(sluice_trainer_start(nullptr), SLUICE_ERROR_INVALID_ARGUMENT, kNull);
  EXPECT_STATUS(sluice_train_step(nullptr, data.inputs.data(), data.targets.data(), kBatch, &loss),
                SLUICE_ERROR_INVALID_ARGUMENT, kNull);
  EXPECT_STATUS(sluice_predict(nullptr, data.inputs.data(), outputs.data(), kBatch), SLUICE_ERROR_INVALID_ARGUMENT,
                kNull);
  EXPECT_STATUS(sluice_save_checkpoint(nullptr, "x.h5"), SLUICE_ERROR_INVALID_ARGUMENT, kNull);
  EXPECT_STATUS(sluice_load_checkpoint(nullptr, "x.h5"), SLUICE_ERROR_INVALID_ARGUMENT, kNull);
  EXPECT_STATUS(sluice_trainer_stats(nullptr, &stats), SLUICE_ERROR_INVALID_ARGUMENT, kNull);
  EXPECT_STATUS(sluice_trainer_features(nullptr, &in, &out), SLUICE_ERROR_INVALID_ARGUMENT, kNull);
  sluice_trainer_destroy(nullptr);  // documented as fine
}

TEST_F(Trainer, NullPointersAreNamed) {
  create(config_with(kPlainConfigLayer));
  EXPECT_STATUS(sluice_trainer_stats(trainer_, nullptr), SLUICE_ERROR_INVALID_ARGUMENT, "out (sluice_stats*) is NULL");
  int64_t features = 0;
  EXPECT_STATUS(sluice_trainer_features(trainer_, &features, nullptr), SLUICE_ERROR_INVALID_ARGUMENT,
                "output pointer is NULL");
  EXPECT_STATUS(sluice_trainer_features(trainer_, nullptr, &features), SLUICE_ERROR_INVALID_ARGUMENT,
                "output pointer is NULL");
  const sluice_layer_ops ops = scale_ops();
  EXPECT_STATUS(sluice_trainer_register_layer(trainer_, nullptr, &ops, nullptr), SLUICE_ERROR_INVALID_ARGUMENT,
                "layer name is NULL or empty");
  EXPECT_STATUS(sluice_trainer_register_layer(trainer_, "", &ops, nullptr), SLUICE_ERROR_INVALID_ARGUMENT,
                "layer name is NULL or empty");
  EXPECT_STATUS(sluice_trainer_register_layer(trainer_, "scale", nullptr, nullptr), SLUICE_ERROR_INVALID_ARGUMENT,
                "ops (sluice_layer_ops*) is NULL");

  ASSERT_SLUICE_OK(sluice_trainer_start(trainer_));
  std::vector<float> outputs(kBatch * kOutputs);
  EXPECT_STATUS(sluice_predict(trainer_, data_.inputs.data(), nullptr, kBatch), SLUICE_ERROR_INVALID_ARGUMENT,
                "outputs is NULL");
  EXPECT_STATUS(sluice_save_checkpoint(trainer_, nullptr), SLUICE_ERROR_INVALID_ARGUMENT,
                "checkpoint path is NULL or empty");
  EXPECT_STATUS(sluice_save_checkpoint(trainer_, ""), SLUICE_ERROR_INVALID_ARGUMENT,
                "checkpoint path is NULL or empty");
  EXPECT_STATUS(sluice_load_checkpoint(trainer_, nullptr), SLUICE_ERROR_INVALID_ARGUMENT,
                "checkpoint path is NULL or empty");
  // Collective: every rank reports the problem of the rank with the first stage; the others name that rank.
  const std::string expected =
      world_rank() == 0 ? "holds the first stage but inputs is NULL" : "holds the first stage but inputs is NULL (on rank 0";
  EXPECT_STATUS(sluice_train_step(trainer_, nullptr, data_.targets.data(), kBatch, nullptr),
                SLUICE_ERROR_INVALID_ARGUMENT, expected);
  const std::string expected_targets =
      "holds the last stage but targets is NULL" +
      std::string(world_rank() == world_size() - 1 ? "" : " (on rank " + std::to_string(world_size() - 1));
  EXPECT_STATUS(sluice_train_step(trainer_, data_.inputs.data(), nullptr, kBatch, nullptr),
                SLUICE_ERROR_INVALID_ARGUMENT, expected_targets);
  // Nothing above broke the trainer.
  float loss = NAN;
  ASSERT_SLUICE_OK(sluice_train_step(trainer_, data_.inputs.data(), data_.targets.data(), kBatch, &loss));
  EXPECT_TRUE(std::isfinite(loss));
  EXPECT_STREQ(sluice_last_error(), "") << "a successful call leaves no error behind";
}

TEST_F(Trainer, RegisterRejectsIncompleteOps) {
  create(config_with(kPlainConfigLayer));
  sluice_layer_ops ops = scale_ops();
  ops.forward = nullptr;
  EXPECT_STATUS(sluice_trainer_register_layer(trainer_, "scale", &ops, nullptr), SLUICE_ERROR_INVALID_ARGUMENT,
                "layer 'scale': forward callback is NULL");
  ops = scale_ops();
  ops.backward_input = nullptr;
  EXPECT_STATUS(sluice_trainer_register_layer(trainer_, "scale", &ops, nullptr), SLUICE_ERROR_INVALID_ARGUMENT,
                "backward_input");
  ops = scale_ops();
  ops.in_features = 0;
  EXPECT_STATUS(sluice_trainer_register_layer(trainer_, "scale", &ops, nullptr), SLUICE_ERROR_INVALID_ARGUMENT,
                "in_features and out_features must be positive");
  ops = scale_ops();
  ops.num_params = -1;
  EXPECT_STATUS(sluice_trainer_register_layer(trainer_, "scale", &ops, nullptr), SLUICE_ERROR_INVALID_ARGUMENT,
                "num_params is negative");
  ops = scale_ops();
  ops.backward_weight = nullptr;
  EXPECT_STATUS(sluice_trainer_register_layer(trainer_, "scale", &ops, nullptr), SLUICE_ERROR_INVALID_ARGUMENT,
                "has parameters but no backward_weight");
  ops = scale_ops();
  ASSERT_SLUICE_OK(sluice_trainer_register_layer(trainer_, "scale", &ops, nullptr));
  EXPECT_STATUS(sluice_trainer_register_layer(trainer_, "scale", &ops, nullptr), SLUICE_ERROR_INVALID_ARGUMENT,
                "layer 'scale' is already registered");
}

TEST_F(Trainer, RejectsBatchSizesTheScheduleCannotSplit) {
  create(config_with(kPlainConfigLayer));
  ASSERT_SLUICE_OK(sluice_trainer_start(trainer_));
  std::vector<float> outputs(kBatch * kOutputs);
  // 3 rows cannot give each of the 4 micro-batches a row; 6 rows can (micro-batches of 2, 2, 1 and 1 rows).
  EXPECT_STATUS(sluice_train_step(trainer_, data_.inputs.data(), data_.targets.data(), 3, nullptr),
                SLUICE_ERROR_INVALID_ARGUMENT, "is smaller than pipeline.microbatches (4)");
  ASSERT_SLUICE_OK(sluice_train_step(trainer_, data_.inputs.data(), data_.targets.data(), 6, nullptr));
  // sluice_predict takes any batch >= 1 (the rows left over run one per micro-batch).
  ASSERT_SLUICE_OK(sluice_predict(trainer_, data_.inputs.data(), outputs.data(), 6));
  EXPECT_STATUS(sluice_train_step(trainer_, data_.inputs.data(), data_.targets.data(), 0, nullptr),
                SLUICE_ERROR_INVALID_ARGUMENT, "batch must be positive, got 0");
  EXPECT_STATUS(sluice_train_step(trainer_, data_.inputs.data(), data_.targets.data(), -4, nullptr),
                SLUICE_ERROR_INVALID_ARGUMENT, "batch must be positive, got -4");
  EXPECT_STATUS(sluice_predict(trainer_, data_.inputs.data(), outputs.data(), -4), SLUICE_ERROR_INVALID_ARGUMENT,
                "batch must be positive, got -4");
}

TEST_F(Trainer, CallsOutOfOrderAreStateErrors) {
  create(config_with(kPlainConfigLayer));
  std::vector<float> outputs(kBatch * kOutputs);
  const char* const kNotStarted = "not started";
  EXPECT_STATUS(sluice_train_step(trainer_, data_.inputs.data(), data_.targets.data(), kBatch, nullptr),
                SLUICE_ERROR_STATE, kNotStarted);
  EXPECT_STATUS(sluice_predict(trainer_, data_.inputs.data(), outputs.data(), kBatch), SLUICE_ERROR_STATE,
                kNotStarted);
  EXPECT_STATUS(sluice_save_checkpoint(trainer_, "never.h5"), SLUICE_ERROR_STATE, kNotStarted);
  EXPECT_STATUS(sluice_load_checkpoint(trainer_, "never.h5"), SLUICE_ERROR_STATE, kNotStarted);
  ASSERT_SLUICE_OK(sluice_trainer_start(trainer_));
  EXPECT_STATUS(sluice_trainer_start(trainer_), SLUICE_ERROR_STATE, "already started");
  const sluice_layer_ops ops = scale_ops();
  EXPECT_STATUS(sluice_trainer_register_layer(trainer_, "scale", &ops, nullptr), SLUICE_ERROR_STATE,
                "before sluice_trainer_start");
}

TEST(Destroyed, HandleIsRejectedAfterDestroy) {
  sluice_trainer* trainer = nullptr;
  ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, config_with(kPlainConfigLayer).c_str(), &trainer));
  sluice_trainer_destroy(trainer);
  // The handle now dangles; the library must recognise it without touching it.
  const char* const kDead = "not a live trainer";
  sluice_stats stats = SLUICE_STATS_INIT;
  int64_t in = 0, out = 0;
  EXPECT_STATUS(sluice_trainer_start(trainer), SLUICE_ERROR_INVALID_ARGUMENT, kDead);
  EXPECT_STATUS(sluice_trainer_stats(trainer, &stats), SLUICE_ERROR_INVALID_ARGUMENT, kDead);
  EXPECT_STATUS(sluice_trainer_features(trainer, &in, &out), SLUICE_ERROR_INVALID_ARGUMENT, kDead);
  sluice_trainer_destroy(trainer);  // a second destroy is ignored, not a double free
}

TEST_F(Trainer, UnknownCustomLayerFailsAtStartNamingIt) {
  create(config_with("{type: custom, name: no_such_layer}"));
  EXPECT_STATUS(sluice_trainer_start(trainer_), SLUICE_ERROR_CONFIG, "no_such_layer");
}

TEST_F(Trainer, CustomLayerWithWrongInputWidthFailsAtStart) {
  create(config_with("{type: custom, name: scale}"));
  sluice_layer_ops ops = scale_ops();
  ops.in_features = kFeatures + 1;
  ASSERT_SLUICE_OK(sluice_trainer_register_layer(trainer_, "scale", &ops, nullptr));
  EXPECT_STATUS(sluice_trainer_start(trainer_), SLUICE_ERROR_CONFIG, "registered with in_features 5");
}

// --- device arrays (sluice.h, "Device arrays") and custom layers bound to host or device memory ----------------

// config_with on `devices` (`cuda`, `cpu`, or a list): the custom layer (first) is on stage 0.
std::string config_on(const std::string& first_layer, const std::string& devices) {
  return config_with(first_layer) + "device: " + devices + "\n";
}

TEST_F(Trainer, DeviceArrayCallsAreUnsupportedWithoutCudaAndKeepTheRanksInStep) {
#ifdef SLUICE_TEST_CUDA_BUILD
  GTEST_SKIP() << "a CUDA build stages device arrays instead (tests/cuda/device_array_calls_test.cc)";
#endif
  create(config_with(kPlainConfigLayer));
  ASSERT_SLUICE_OK(sluice_trainer_start(trainer_));
  std::vector<float> outputs(kBatch * kOutputs);
  const float* x = data_.inputs.data();
  const float* y = data_.targets.data();
  float loss = NAN;
  const char* const kWhy = ": this library was built without CUDA, so it cannot read device arrays; build Sluice "
                           "with --config=cuda";
  EXPECT_STATUS(sluice_train_step_device(trainer_, x, y, kBatch, &loss, nullptr), SLUICE_ERROR_UNSUPPORTED,
                std::string("sluice_train_step_device") + kWhy);
  EXPECT_STATUS(sluice_submit_samples_device(trainer_, x, y, kBatch, nullptr), SLUICE_ERROR_UNSUPPORTED,
                std::string("sluice_submit_samples_device") + kWhy);
  EXPECT_STATUS(sluice_predict_device(trainer_, x, outputs.data(), kBatch, nullptr), SLUICE_ERROR_UNSUPPORTED,
                std::string("sluice_predict_device") + kWhy);
  EXPECT_STATUS(sluice_evaluate_device(trainer_, x, y, kBatch, &loss, nullptr), SLUICE_ERROR_UNSUPPORTED,
                std::string("sluice_evaluate_device") + kWhy);
  EXPECT_STATUS(sluice_model_predict_device(nullptr, x, outputs.data(), kBatch, nullptr), SLUICE_ERROR_UNSUPPORTED,
                std::string("sluice_model_predict_device") + kWhy);
  EXPECT_TRUE(std::isnan(loss)) << "a refused call writes nothing";
  // Every rank refused alone, without communication: the next collective call finds them all in step.
  ASSERT_SLUICE_OK(sluice_train_step(trainer_, x, y, kBatch, &loss));
  EXPECT_TRUE(std::isfinite(loss));
}

TEST_F(Trainer, RegisterRejectsALayerDeviceOtherThanHostOrCuda) {
  create(config_with(kPlainConfigLayer));
  sluice_layer_ops ops = scale_ops();
  ops.device = 2;
  EXPECT_STATUS(sluice_trainer_register_layer(trainer_, "scale", &ops, nullptr), SLUICE_ERROR_INVALID_ARGUMENT,
                "layer 'scale': device is 2; it must be 0 (host arrays) or 1 (CUDA device arrays)");
}

TEST(Model, RefusesALayerOnDeviceArrays) {
  sluice_model* model = nullptr;
  ASSERT_SLUICE_OK(sluice_model_create(&model));
  sluice_layer_ops ops = scale_ops();
  ops.device = 1;
  EXPECT_STATUS(sluice_model_register_layer(model, "scale", &ops, nullptr), SLUICE_ERROR_INVALID_ARGUMENT,
                "layer 'scale': device is 1; a sluice_model runs on the host");
  sluice_model_destroy(model);
}

// Stage 0 (the custom layer's) on cuda; with 2 ranks stage 1 stays on cpu. Refused at start before any GPU is
// needed, so this runs in every build, with or without a device.
std::string custom_layer_on_cuda() {
  return config_on("{type: custom, name: scale}", world_size() == 1 ? "cuda" : "[cuda, cpu]");
}

TEST_F(Trainer, HostCustomLayerOnACudaStageFailsAtStartNamingIt) {
  create(custom_layer_on_cuda());
  const sluice_layer_ops ops = scale_ops();  // device 0: host arrays
  ASSERT_SLUICE_OK(sluice_trainer_register_layer(trainer_, "scale", &ops, nullptr));
  EXPECT_STATUS(sluice_trainer_start(trainer_), SLUICE_ERROR_CONFIG,
                "custom layer 'scale' (model.layers[0], on pipeline stage 0) was registered with "
                "sluice_layer_ops.device = 0 (host arrays) but its stage's device is cuda");
}

TEST_F(Trainer, DeviceCustomLayerOnACudaStageIsNotBuiltYet) {
  create(custom_layer_on_cuda());
  sluice_layer_ops ops = scale_ops();
  ops.device = 1;
  ASSERT_SLUICE_OK(sluice_trainer_register_layer(trainer_, "scale", &ops, nullptr));
  EXPECT_STATUS(sluice_trainer_start(trainer_), SLUICE_ERROR_UNSUPPORTED,
                "custom layer 'scale' (model.layers[0], on pipeline stage 0): custom layers on device arrays");
}

TEST_F(Trainer, DeviceCustomLayerOnACpuStageFailsAtStartNamingIt) {
  create(config_on("{type: custom, name: scale}", "cpu"));
  sluice_layer_ops ops = scale_ops();
  ops.device = 1;
  ASSERT_SLUICE_OK(sluice_trainer_register_layer(trainer_, "scale", &ops, nullptr));
  EXPECT_STATUS(sluice_trainer_start(trainer_), SLUICE_ERROR_CONFIG,
                "custom layer 'scale' (model.layers[0], on pipeline stage 0) was registered with "
                "sluice_layer_ops.device = 1 (CUDA device arrays) but its stage's device is cpu");
}

// Which callback fails, on rank 0 only (the rank owning the custom layer).
enum class FailingCallback { kForward, kBackwardInput, kBackwardWeight };

class FailingCallbackTest : public ::testing::TestWithParam<FailingCallback> {};

TEST_P(FailingCallbackTest, FailsTheStepOnEveryRankAndTheNextStepWorks) {
  ScaleLayer layer;
  sluice_trainer* trainer = nullptr;
  ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, config_with("{type: custom, name: scale}").c_str(), &trainer));
  const sluice_layer_ops ops = scale_ops();
  ASSERT_SLUICE_OK(sluice_trainer_register_layer(trainer, "scale", &ops, &layer));
  ASSERT_SLUICE_OK(sluice_trainer_start(trainer));
  Data data;
  float loss = NAN;
  ASSERT_SLUICE_OK(sluice_train_step(trainer, data.inputs.data(), data.targets.data(), kBatch, &loss));
  std::vector<float> before(kBatch * kOutputs), after(kBatch * kOutputs);
  ASSERT_SLUICE_OK(sluice_predict(trainer, data.inputs.data(), before.data(), kBatch));

  const char* callback = "";
  const bool fails_here = world_rank() == 0;
  switch (GetParam()) {
    case FailingCallback::kForward: layer.fail_forward = fails_here; callback = "forward returned 1"; break;
    case FailingCallback::kBackwardInput:
      layer.fail_backward_input = fails_here;
      callback = "backward_input returned 1";
      break;
    case FailingCallback::kBackwardWeight:
      layer.fail_backward_weight = fails_here;
      callback = "backward_weight returned 1";
      break;
  }
  // Every rank reports the failing callback; the others also name the rank it failed on.
  const std::string expected = fails_here ? std::string("custom layer 'scale'") : std::string(" (on rank ");
  EXPECT_STATUS(sluice_train_step(trainer, data.inputs.data(), data.targets.data(), kBatch, &loss),
                SLUICE_ERROR_CALLBACK, expected);
  if (fails_here) {
    EXPECT_NE(std::string(sluice_last_error()).find(callback), std::string::npos) << sluice_last_error();
  }

  // The failed step applied no update anywhere, and the trainer is still usable.
  layer = ScaleLayer{};
  ASSERT_SLUICE_OK(sluice_predict(trainer, data.inputs.data(), after.data(), kBatch));
  EXPECT_EQ(before, after);
  sluice_stats stats = SLUICE_STATS_INIT;
  ASSERT_SLUICE_OK(sluice_trainer_stats(trainer, &stats));
  EXPECT_EQ(stats.steps, 1);
  loss = NAN;
  ASSERT_SLUICE_OK(sluice_train_step(trainer, data.inputs.data(), data.targets.data(), kBatch, &loss));
  EXPECT_TRUE(std::isfinite(loss));
  ASSERT_SLUICE_OK(sluice_trainer_stats(trainer, &stats));
  EXPECT_EQ(stats.steps, 2);
  sluice_trainer_destroy(trainer);
}

INSTANTIATE_TEST_SUITE_P(Callbacks, FailingCallbackTest,
                         ::testing::Values(FailingCallback::kForward, FailingCallback::kBackwardInput,
                                           FailingCallback::kBackwardWeight),
                         [](const ::testing::TestParamInfo<FailingCallback>& info) {
                           switch (info.param) {
                             case FailingCallback::kForward: return std::string("Forward");
                             case FailingCallback::kBackwardInput: return std::string("BackwardInput");
                             case FailingCallback::kBackwardWeight: return std::string("BackwardWeight");
                           }
                           return std::string("Unknown");
                         });

}  // namespace
