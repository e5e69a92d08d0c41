// A layer handed to the pipeline through the C API's callbacks trains exactly like the same layer built in
// (issue 4: "same parameters as the same layer built in"). Two 4-rank pipelines differ only in layer 4:
// {type: linear} in one, {type: custom} backed by linear_callback.c (same OpenBLAS calls, same initial values)
// in the other. After training, each run saves a checkpoint, and every parameter and optimizer-state dataset
// of the two files must be bitwise equal (the callback layer's single `params` tensor against the built-in
// layer's weight and bias, concatenated as linear_callback.h lays them out). Losses and predictions after every
// step must be bitwise equal too. Every schedule, with and without recomputation. Run with 4 ranks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "core/config/config_parser.h"
#include "core/model/builder.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/capi/checkpoint_tensors.h"
#include "tests/capi/linear_callback.h"

namespace {

using Tensors = std::map<std::string, std::vector<float>>;

constexpr int kInputs = 6;
constexpr int kWidth = 8;  // the compared layer is kWidth -> kWidth
constexpr int kOutputs = 3;
constexpr int kBatch = 16;
constexpr int kSteps = 3;
constexpr int kComparedLayer = 4;  // global index of the layer under test
const char* const kComparedLayerGroup = "/layer_0004/";

struct Pipeline {
  std::string schedule;
  int chunks;
  std::string recompute;
};

// Eight layers: with one chunk per rank (split 2,2,2,2) layer 4 is on rank 2; with two chunks (one layer per
// virtual stage) it is in a second chunk, on rank 0 (interleaved) or rank 3 (zb-v). Never on the rank with the
// data only, so its inputs and gradients always cross ranks.
std::string config_with(const std::string& layer_4, const Pipeline& pipeline) {
  const std::string width = std::to_string(kWidth);
  const std::string split = pipeline.chunks == 1 ? "[2, 2, 2, 2]" : "[1, 1, 1, 1, 1, 1, 1, 1]";
  return "model:\n"
         "  inputs: " + std::to_string(kInputs) + "\n"
         "  layers:\n"
         "    - {type: linear, outputs: " + width + "}\n"
         "    - {type: tanh}\n"
         "    - {type: linear, outputs: " + width + "}\n"
         "    - {type: tanh}\n"
         "    - " + layer_4 + "\n"
         "    - {type: tanh}\n"
         "    - {type: linear, outputs: " + width + "}\n"
         "    - {type: linear, outputs: " + std::to_string(kOutputs) + "}\n"
         "pipeline: {stages: 4, schedule: " + pipeline.schedule + ", chunks: " + std::to_string(pipeline.chunks) +
         ", microbatches: 4, split: " + split + ", recompute: " + pipeline.recompute + "}\n"
         "loss: mse\n"
         "optimizer: {type: adamw, lr: 0.05, weight_decay: 0.01}\n"
         "data: {type: external, batch: " + std::to_string(kBatch) + "}\n"
         "seed: 3\n";
}

const std::string kBuiltIn = "{type: linear, outputs: " + std::to_string(kWidth) + "}";
const std::string kCustom = "{type: custom, name: mirror_linear}";

// The built-in layer's initial [weight | bias], from Sluice's own builder and initializer (not a copy of
// its arithmetic), so both pipelines start from the same values.
std::vector<float> built_in_initial_params(const Pipeline& pipeline) {
  const sluice::config::Config config = sluice::config::parse_config(config_with(kBuiltIn, pipeline));
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

// Starts, trains kSteps steps (predicting after each), and saves the final state to `checkpoint`.
void train(sluice_trainer* trainer, const std::string& checkpoint, TrainingRun& run) {
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
  ASSERT_SLUICE_OK(sluice_save_checkpoint(trainer, checkpoint.c_str()));
}

bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// What the callback run's checkpoint must hold, given the built-in run's: the same datasets, except that the
// compared layer's weight and bias (and each of their optimizer states) become one `params` tensor, weight
// first (linear_callback.h's layout). Missing halves fail the test rather than being skipped.
Tensors as_callback_layer(const Tensors& built_in) {
  Tensors expected, weights, biases;
  const std::string group = kComparedLayerGroup;
  for (const auto& [path, values] : built_in) {
    const size_t at = path.find(group);
    if (at == std::string::npos) {
      expected[path] = values;
      continue;
    }
    const size_t name_start = at + group.size();
    const size_t name_end = path.find('/', name_start);  // npos for /model/..., the state follows for /optimizer/...
    const std::string name = path.substr(name_start, name_end - name_start);
    const std::string renamed =
        path.substr(0, name_start) + "params" + (name_end == std::string::npos ? "" : path.substr(name_end));
    if (name == "weight") {
      weights[renamed] = values;
    } else if (name == "bias") {
      biases[renamed] = values;
    } else {
      ADD_FAILURE() << "unexpected dataset " << path << " in the built-in linear layer";
    }
  }
  for (const auto& [path, weight] : weights) {
    EXPECT_EQ(biases.count(path), 1u) << path << ": the built-in layer has a weight but no bias";
    std::vector<float> joined = weight;
    joined.insert(joined.end(), biases[path].begin(), biases[path].end());
    expected[path] = joined;
  }
  return expected;
}

std::string checkpoint_path(const std::string& test, const std::string& run) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + test + "_" + run + ".h5";
}

std::string test_name(const Pipeline& p) {
  std::string name = p.schedule + "_chunks" + std::to_string(p.chunks) + "_recompute_" + p.recompute;
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

// gtest prints a failing parameter with this instead of its raw bytes.
void PrintTo(const Pipeline& pipeline, std::ostream* os) { *os << test_name(pipeline); }

class CallbackLayerEquivalence : public ::testing::TestWithParam<Pipeline> {};

TEST_P(CallbackLayerEquivalence, TrainsToBitwiseTheSameParametersAsTheBuiltInLinearLayer) {
  const Pipeline pipeline = GetParam();
  int world_size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  ASSERT_EQ(world_size, 4) << "this test builds a 4-stage pipeline: run it with 4 ranks";
  const std::string built_in_file = checkpoint_path(test_name(pipeline), "built_in");
  const std::string callback_file = checkpoint_path(test_name(pipeline), "callback");

  TrainingRun built_in;
  sluice_trainer* reference = nullptr;
  ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, config_with(kBuiltIn, pipeline).c_str(), &reference));
  train(reference, built_in_file, built_in);
  sluice_trainer_destroy(reference);
  ASSERT_FALSE(HasFatalFailure());

  TrainingRun custom;
  linear_callback layer = {kWidth, kWidth, 0};
  const std::vector<float> initial = built_in_initial_params(pipeline);
  sluice_layer_ops ops = linear_callback_ops(&layer);
  ASSERT_EQ(static_cast<int64_t>(initial.size()), ops.num_params);
  ops.initial_params = initial.data();
  sluice_trainer* trainer = nullptr;
  ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, config_with(kCustom, pipeline).c_str(), &trainer));
  ASSERT_SLUICE_OK(sluice_trainer_register_layer(trainer, "mirror_linear", &ops, &layer));
  train(trainer, callback_file, custom);
  sluice_trainer_destroy(trainer);
  ASSERT_FALSE(HasFatalFailure());

  // The callbacks really ran (on the rank owning layer 4), and training really moved the predictions, so
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

  // The parameters themselves, read from the two checkpoints (one file per run, so one reader suffices).
  if (rank != 0) return;
  const Tensors expected = as_callback_layer(sluice::capi_test::read_checkpoint_tensors(built_in_file));
  const Tensors actual = sluice::capi_test::read_checkpoint_tensors(callback_file);
  const std::string compared_params = std::string("/model") + kComparedLayerGroup + "params";
  ASSERT_EQ(actual.count(compared_params), 1u) << callback_file << " has no " << compared_params;
  EXPECT_FALSE(bitwise_equal(actual.at(compared_params), initial)) << "training did not move the callback's params";
  // Documented datasets (docs/CHECKPOINT_FORMAT.md) that must be there, so two empty reads cannot pass.
  for (const char* path : {"/model/layer_0000/weight", "/model/layer_0007/bias", "/optimizer/layer_0004/params/exp_avg",
                           "/optimizer/layer_0004/params/exp_avg_sq"}) {
    EXPECT_EQ(expected.count(path), 1u) << path << " missing from the built-in run's checkpoint";
  }
  for (const auto& [path, values] : expected) {
    auto it = actual.find(path);
    if (it == actual.end()) {
      ADD_FAILURE() << path << " is in the built-in run's checkpoint but not in the callback run's";
      continue;
    }
    EXPECT_TRUE(bitwise_equal(values, it->second)) << path << " differs between the built-in and the callback run";
  }
  for (const auto& [path, values] : actual) {
    EXPECT_EQ(expected.count(path), 1u) << path << " is only in the callback run's checkpoint";
  }
}

INSTANTIATE_TEST_SUITE_P(Schedules, CallbackLayerEquivalence,
                         ::testing::Values(Pipeline{"gpipe", 1, "none"}, Pipeline{"gpipe", 1, "full"},
                                           Pipeline{"1f1b", 1, "none"}, Pipeline{"1f1b", 1, "full"},
                                           Pipeline{"interleaved", 2, "none"}, Pipeline{"interleaved", 2, "full"},
                                           Pipeline{"zb-h1", 1, "none"}, Pipeline{"zb-h1", 1, "full"},
                                           Pipeline{"zb-v", 2, "none"}, Pipeline{"zb-v", 2, "full"}),
                         [](const ::testing::TestParamInfo<Pipeline>& info) { return test_name(info.param); });

}  // namespace
