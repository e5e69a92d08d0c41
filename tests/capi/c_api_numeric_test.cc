// Non-finite values end a training step with SLUICE_ERROR_NUMERIC on every rank (4 ranks, 4 stages, AdamW), the
// message naming the offender, and change nothing: a NaN in one input sample (first-stage rank), an Inf in the
// targets (last-stage rank), and a custom layer whose backward_weight writes a NaN into its gradient. After each
// refusal the predictions are bitwise those from before, and the next good steps end bitwise where a trainer that
// never saw the bad steps ends (so parameters, AdamW moments and its step count were all left alone).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <sluice/sluice.h>

#include "tests/capi/linear_callback.h"
#include "tests/capi/run_test_support.h"

namespace {

constexpr int kInputs = 4, kOutputs = 3, kWidth = 5, kBatch = 4;

const std::string kConfig =
    "model:\n  inputs: 4\n  layers:\n    - {type: linear, outputs: 5}\n    - {type: tanh}\n"
    "    - {type: custom, name: lin}\n    - {type: tanh}\n    - {type: linear, outputs: 3}\n"
    "pipeline: {stages: 4, schedule: 1f1b, microbatches: 2, split: [1, 1, 2, 1]}\n"
    "optimizer: {type: adamw, lr: 0.05}\ndata: {type: external, batch: 4}\nseed: 5\n";

// linear_callback.c, whose backward_weight can be made to write a NaN into the gradient.
struct PoisonableLayer {
  linear_callback inner{kWidth, kWidth, 0};
  sluice_layer_ops inner_ops = linear_callback_ops(&inner);
  bool poison = false;
};

int poisonable_forward(void* u, const float* p, const float* x, float* y, int64_t batch) {
  auto* layer = static_cast<PoisonableLayer*>(u);
  return layer->inner_ops.forward(&layer->inner, p, x, y, batch);
}
int poisonable_backward_input(void* u, const float* p, const float* x, const float* dy, float* dx, int64_t batch) {
  auto* layer = static_cast<PoisonableLayer*>(u);
  return layer->inner_ops.backward_input(&layer->inner, p, x, dy, dx, batch);
}
int poisonable_backward_weight(void* u, const float* p, const float* x, const float* dy, float* grads, int64_t batch) {
  auto* layer = static_cast<PoisonableLayer*>(u);
  const int rc = layer->inner_ops.backward_weight(&layer->inner, p, x, dy, grads, batch);
  if (layer->poison) grads[1] = std::numeric_limits<float>::quiet_NaN();
  return rc;
}

struct TrainerRun {
  PoisonableLayer layer;
  std::vector<float> initial;
  sluice_trainer* t = nullptr;
  TrainerRun() {
    sluice_layer_ops ops = layer.inner_ops;
    initial.resize(static_cast<size_t>(ops.num_params));
    for (size_t i = 0; i < initial.size(); ++i) initial[i] = static_cast<float>(0.2 * std::cos(0.9 * i));
    ops.initial_params = initial.data();
    ops.forward = poisonable_forward;
    ops.backward_input = poisonable_backward_input;
    ops.backward_weight = poisonable_backward_weight;
    EXPECT_EQ(sluice_trainer_create(MPI_COMM_WORLD, kConfig.c_str(), &t), SLUICE_OK) << sluice_last_error();
    EXPECT_EQ(sluice_trainer_register_layer(t, "lin", &ops, &layer), SLUICE_OK) << sluice_last_error();
    EXPECT_EQ(sluice_trainer_start(t), SLUICE_OK) << sluice_last_error();
  }
  ~TrainerRun() { sluice_trainer_destroy(t); }
};

struct Batch {
  std::vector<float> x = std::vector<float>(kBatch * kInputs), y = std::vector<float>(kBatch * kOutputs);
  explicit Batch(int k) {
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.3 * i + k));
    for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(std::cos(0.7 * i - k));
  }
};

std::vector<float> predict(sluice_trainer* t) {
  const Batch probe(42);
  std::vector<float> out(kBatch * kOutputs);
  EXPECT_EQ(sluice_predict(t, probe.x.data(), out.data(), kBatch), SLUICE_OK) << sluice_last_error();
  return out;
}

int64_t steps_of(sluice_trainer* t) {
  sluice_stats stats = SLUICE_STATS_INIT;
  EXPECT_EQ(sluice_trainer_stats(t, &stats), SLUICE_OK);
  return stats.steps;
}

// A bad step: NUMERIC with `expected` in the message on every rank, and nothing changed.
void expect_refused(TrainerRun& run, const Batch& b, const std::string& expected) {
  const std::vector<float> before = predict(run.t);
  const int64_t steps = steps_of(run.t);
  float loss = 0;
  EXPECT_EQ(sluice_train_step(run.t, b.x.data(), b.y.data(), kBatch, &loss), SLUICE_ERROR_NUMERIC)
      << sluice_last_error();
  EXPECT_NE(std::string(sluice_last_error()).find(expected), std::string::npos) << sluice_last_error();
  EXPECT_EQ(predict(run.t), before) << "a refused step changed the parameters";
  EXPECT_EQ(steps_of(run.t), steps);
}

TEST(Numeric, NonFiniteValuesEndTheStepOnEveryRankAndChangeNothing) {
  TrainerRun run, reference;
  ASSERT_SLUICE_OK(sluice_train_step(run.t, Batch(0).x.data(), Batch(0).y.data(), kBatch, nullptr));
  ASSERT_SLUICE_OK(sluice_train_step(reference.t, Batch(0).x.data(), Batch(0).y.data(), kBatch, nullptr));

  Batch nan_input(1);
  nan_input.x[3 * kInputs + 2] = std::numeric_limits<float>::quiet_NaN();  // sample 3, read by rank 0 only
  expect_refused(run, nan_input, "non-finite value (nan) in the inputs of sample 3 (feature 2) on rank 0");

  Batch inf_target(1);
  inf_target.y[1 * kOutputs] = std::numeric_limits<float>::infinity();  // read by rank 3 only
  expect_refused(run, inf_target, "non-finite value (inf) in the targets of sample 1 (feature 0) on rank 3");

  run.layer.poison = true;  // the custom layer (global layer 2) writes a NaN into its parameter gradient
  expect_refused(run, Batch(1), "non-finite gradient of layers.2.params");
  run.layer.poison = false;

  for (int k = 1; k < 4; ++k) {
    const Batch b(k);
    float mine = NAN, theirs = NAN;
    ASSERT_SLUICE_OK(sluice_train_step(run.t, b.x.data(), b.y.data(), kBatch, &mine));
    ASSERT_SLUICE_OK(sluice_train_step(reference.t, b.x.data(), b.y.data(), kBatch, &theirs));
    EXPECT_EQ(mine, theirs) << "step " << k;
  }
  EXPECT_EQ(predict(run.t), predict(reference.t)) << "the refused steps left a trace in the training";
  EXPECT_EQ(steps_of(run.t), 4);
}

}  // namespace
