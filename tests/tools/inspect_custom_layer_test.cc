// `sluice inspect` names each layer by its type from the checkpoint's config, a custom layer by the name the
// application registered it under: a checkpoint written through the C API with a custom layer "heat_stencil"
// (1 rank), inspected as the `sluice` binary does (its inspect subcommand, in process), in text and JSON.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <sluice/sluice.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "tools/sluice/inspect_command.h"

namespace {

constexpr int kFeatures = 4, kOutputs = 2;

// y = scale * x, one parameter: just enough of a custom layer to be built and saved.
int scale_forward(void*, const float* params, const float* x, float* y, int64_t batch) {
  for (int64_t i = 0; i < batch * kFeatures; ++i) y[i] = params[0] * x[i];
  return 0;
}
int scale_backward_input(void*, const float* params, const float*, const float* dy, float* dx, int64_t batch) {
  for (int64_t i = 0; i < batch * kFeatures; ++i) dx[i] = params[0] * dy[i];
  return 0;
}
int scale_backward_weight(void*, const float*, const float* x, const float* dy, float* grads, int64_t batch) {
  for (int64_t i = 0; i < batch * kFeatures; ++i) grads[0] += x[i] * dy[i];
  return 0;
}

sluice_layer_ops scale_ops() {
  sluice_layer_ops ops = SLUICE_LAYER_OPS_INIT;
  ops.in_features = kFeatures;
  ops.out_features = kFeatures;
  ops.num_params = 1;
  ops.forward = scale_forward;
  ops.backward_input = scale_backward_input;
  ops.backward_weight = scale_backward_weight;
  return ops;
}

using ::testing::HasSubstr;
using ::testing::Not;

std::string checkpoint_with_custom_layer() {
  const std::string yaml = "model:\n  inputs: " + std::to_string(kFeatures) +
                           "\n  layers:\n    - {type: custom, name: heat_stencil}\n    - {type: tanh}\n"
                           "    - {type: linear, outputs: " + std::to_string(kOutputs) +
                           "}\npipeline: {stages: 1, schedule: 1f1b, microbatches: 2}\n"
                           "optimizer: {type: sgd, lr: 0.1}\ndata: {type: external, batch: 8}\n";
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string file = std::string(tmp ? tmp : "/tmp") + "/custom_layer.h5";
  sluice_trainer* t = nullptr;
  EXPECT_EQ(sluice_trainer_create(MPI_COMM_WORLD, yaml.c_str(), &t), SLUICE_OK) << sluice_last_error();
  const sluice_layer_ops ops = scale_ops();
  EXPECT_EQ(sluice_trainer_register_layer(t, "heat_stencil", &ops, nullptr), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(sluice_trainer_start(t), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(sluice_save_checkpoint(t, file.c_str()), SLUICE_OK) << sluice_last_error();
  sluice_trainer_destroy(t);
  return file;
}

std::string inspect(std::vector<std::string> args) {
  CLI::App app;
  sluice::tools::register_inspect_command(app);
  args.insert(args.begin(), "inspect");
  std::reverse(args.begin(), args.end());  // CLI11 takes the vector form in reverse order
  ::testing::internal::CaptureStdout();
  app.parse(args);
  return ::testing::internal::GetCapturedStdout();
}

TEST(InspectCustomLayer, ShowsCustomLayersByTheirRegisteredName) {
  const std::string file = checkpoint_with_custom_layer();
  const std::string text = inspect({file});
  EXPECT_THAT(text, HasSubstr("layer_0000 (custom:heat_stencil): 1 parameters:"));
  EXPECT_THAT(text, HasSubstr("layer_0002 (linear): "));
  EXPECT_THAT(text, Not(HasSubstr("layer_0001")));  // tanh has no parameters, so no datasets
  const std::string json = inspect({file, "--json"});
  EXPECT_THAT(json, HasSubstr("\"type\":\"custom:heat_stencil\"}"));
  EXPECT_THAT(json, HasSubstr("\"type\":\"linear\"}"));
}

}  // namespace
