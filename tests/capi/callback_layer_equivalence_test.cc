// A layer handed to the pipeline through the C API's callbacks trains exactly like the same layer built in.
// Two 4-stage pipelines differ only in layer 2: {type: linear} in one, {type: custom} backed by
// linear_callback.c (same OpenBLAS calls, same initial values) in the other. Their losses and predictions after
// every step must be bitwise equal: any difference in how Sluice feeds, stashes, accumulates or updates a
// callback layer's data shows up here. Run with 4 ranks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/config/config_parser.h"
#include "core/model/builder.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/capi/linear_callback.h"

namespace {

constexpr int kInputs = 6;
constexpr int kWidth = 8;  // the compared layer is kWidth -> kWidth
constexpr int kOutputs = 3;
constexpr int kBatch = 16;
constexpr int kSteps = 3;
constexpr int kComparedLayer = 2;  // global index of the layer under test

// Layer 2 sits alone on stage 1 (split), so it runs on a different rank from the data and the loss.
std::string config_with(const std::string& layer_2, const std::string& schedule) {
  return "model:\n"
         "  inputs: " + std::to_string(kInputs) + "\n"
         "  layers:\n"
         "    - {type: linear, outputs: " + std::to_string(kWidth) + "}\n"
         "    - {type: tanh}\n"
         "    - " + layer_2 + "\n"
         "    - {type: tanh}\n"
         "    - {type: linear, outputs: " + std::to_string(kOutputs) + "}\n"
         "pipeline: {stages: 4, schedule: " + schedule + ", microbatches: 4, split: [2, 1, 1, 1]}\n"
         "loss: mse\n"
         "optimizer: {type: adamw, lr: 0.05, weight_decay: 0.01}\n"
         "data: {type: external, batch: " + std::to_string(kBatch) + "}\n"
         "seed: 3\n";
}

const std::string kBuiltIn = "{type: linear, outputs: " + std::to_string(kWidth) + "}";
const std::string kCustom = "{type: custom, name: mirror_linear}";

// The built-in layer's initial [weight | bias], from Sluice's own builder and initializer (not a copy of
// its arithmetic), so both pipelines start from the same values.
std::vector<float> built_in_initial_params(const std::string& schedule) {
  const sluice::config::Config config = sluice::config::parse_config(config_with(kBuiltIn, schedule));
  auto layers = sluice::model::build_layers(config.model, sluice::kernels::cpu_backend());
  sluice::model::init_layers(layers, config.seed);
  std::vector<float> params;
  for (sluice::model::Parameter* p : layers[kComparedLayer]->parameters()) {
    params.insert(params.end(), p->value.data(), p->value.data() + p->value.size());
  }
  return params;
}

struct TrainingRun {
  std::vector<float> losses;
  std::vector<std::vector<float>> predictions;  // after each step
};

void make_data(std::vector<float>& inputs, std::vector<float>& targets) {
  inputs.resize(kBatch * kInputs);
  targets.resize(kBatch * kOutputs);
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)));
  for (size_t i = 0; i < targets.size(); ++i) targets[i] = static_cast<float>(std::cos(0.91 * static_cast<double>(i)));
}

#define ASSERT_SLUICE_OK(call) ASSERT_EQ((call), SLUICE_OK) << #call << ": " << sluice_last_error()

void train(sluice_trainer* trainer, TrainingRun& run) {
  std::vector<float> inputs, targets;
  make_data(inputs, targets);
  ASSERT_SLUICE_OK(sluice_trainer_start(trainer));
  for (int step = 0; step < kSteps; ++step) {
    float loss = NAN;
    ASSERT_SLUICE_OK(sluice_train_step(trainer, inputs.data(), targets.data(), kBatch, &loss));
    run.losses.push_back(loss);
    std::vector<float> outputs(kBatch * kOutputs, NAN);
    ASSERT_SLUICE_OK(sluice_predict(trainer, inputs.data(), outputs.data(), kBatch));
    run.predictions.push_back(outputs);
  }
}

bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

class CallbackLayerEquivalence : public ::testing::TestWithParam<std::string> {};

TEST_P(CallbackLayerEquivalence, TrainsBitwiseLikeTheBuiltInLinearLayer) {
  const std::string schedule = GetParam();
  int world_size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  ASSERT_EQ(world_size, 4) << "this test builds a 4-stage pipeline: run it with 4 ranks";

  TrainingRun built_in;
  sluice_trainer* reference = nullptr;
  ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, config_with(kBuiltIn, schedule).c_str(), &reference));
  train(reference, built_in);
  sluice_trainer_destroy(reference);
  ASSERT_FALSE(HasFatalFailure());

  TrainingRun custom;
  linear_callback layer = {kWidth, kWidth, 0};
  const std::vector<float> initial = built_in_initial_params(schedule);
  sluice_layer_ops ops = linear_callback_ops(&layer);
  ASSERT_EQ(static_cast<int64_t>(initial.size()), ops.num_params);
  ops.initial_params = initial.data();
  sluice_trainer* trainer = nullptr;
  ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, config_with(kCustom, schedule).c_str(), &trainer));
  ASSERT_SLUICE_OK(sluice_trainer_register_layer(trainer, "mirror_linear", &ops, &layer));
  train(trainer, custom);
  sluice_trainer_destroy(trainer);
  ASSERT_FALSE(HasFatalFailure());

  // The callbacks really ran (on the rank owning stage 1), and training really moved the predictions, so
  // equality below is not the trivial kind.
  int64_t calls = 0;
  MPI_Allreduce(&layer.forward_calls, &calls, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_GT(calls, 0);
  EXPECT_FALSE(bitwise_equal(built_in.predictions.front(), built_in.predictions.back()));

  ASSERT_EQ(custom.losses.size(), built_in.losses.size());
  for (size_t step = 0; step < built_in.losses.size(); ++step) {
    EXPECT_TRUE(std::isfinite(built_in.losses[step]));
    // Bit patterns, not ==, so that a NaN in both would still fail.
    uint32_t a = 0, b = 0;
    std::memcpy(&a, &built_in.losses[step], sizeof a);
    std::memcpy(&b, &custom.losses[step], sizeof b);
    EXPECT_EQ(a, b) << "loss of step " << step + 1 << ": built-in " << built_in.losses[step] << ", callback "
                    << custom.losses[step];
    EXPECT_TRUE(bitwise_equal(built_in.predictions[step], custom.predictions[step]))
        << "predictions differ after step " << step + 1;
  }
}

INSTANTIATE_TEST_SUITE_P(Schedules, CallbackLayerEquivalence, ::testing::Values("gpipe", "1f1b", "zb-h1"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

}  // namespace
