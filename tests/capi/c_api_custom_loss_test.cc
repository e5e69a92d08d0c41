// loss: custom through the C API (2 ranks, 2 pipeline stages):
// - a C callback computing MSE exactly as the built-in trains bit for bit like `loss: mse` (parameters and
//   optimizer state from the checkpoints, and every step's reported loss), for 1f1b, zb-v, gpipe and with
//   optimizer.accumulate 2: the callback gets the same micro-batches and the same global batch;
// - a callback that fails ends the step on every rank with SLUICE_ERROR_CALLBACK, and the trainer trains on;
// - loss: custom without a registered loss, on one rank or all, fails start on every rank with CONFIG naming
//   `loss: custom`; a registered loss under loss: mse is refused too; registration errors are the documented ones.
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
#include "tests/capi/mse_loss_callback.h"
#include "tests/mpi_world.h"

namespace {

using sluice::testing::world_rank;

constexpr int kIn = 5, kOut = 3, kBatch = 8, kSteps = 4;

std::string config(const std::string& loss, const std::string& schedule, int accumulate = 1) {
  const int chunks = schedule == "zb-v" ? 2 : 1;
  return "model:\n  inputs: 5\n  layers:\n    - {type: linear, outputs: 7}\n    - {type: tanh}\n"
         "    - {type: linear, outputs: 6}\n    - {type: linear, outputs: 3}\n"
         "pipeline: {stages: 2, schedule: " + schedule + ", chunks: " + std::to_string(chunks) +
         ", microbatches: 4}\nloss: " + loss + "\noptimizer: {type: adamw, lr: 0.01, accumulate: " +
         std::to_string(accumulate) + "}\ndata: {type: external, batch: 8}\nseed: 3\n";
}

std::string scratch(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return std::string(tmp ? tmp : "/tmp") + "/" + name;
}

// Deterministic samples for call `call`.
void samples(int call, std::vector<float>& x, std::vector<float>& y) {
  x.resize(kBatch * kIn);
  y.resize(kBatch * kOut);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.37 * (i + 1) + call));
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(std::cos(0.11 * (i + 3) * (call + 1)));
}

sluice_trainer* create(const std::string& yaml) {
  sluice_trainer* t = nullptr;
  EXPECT_EQ(sluice_trainer_create(MPI_COMM_WORLD, yaml.c_str(), &t), SLUICE_OK) << sluice_last_error();
  return t;
}

// Trains `calls` calls, saves to `file`, returns every call's loss.
std::vector<float> train_and_save(sluice_trainer* t, int calls, const std::string& file) {
  std::vector<float> losses, x, y;
  for (int call = 0; call < calls; ++call) {
    samples(call, x, y);
    float loss = 0;
    EXPECT_EQ(sluice_train_step(t, x.data(), y.data(), kBatch, &loss), SLUICE_OK) << sluice_last_error();
    losses.push_back(loss);
  }
  EXPECT_EQ(sluice_save_checkpoint(t, file.c_str()), SLUICE_OK) << sluice_last_error();
  return losses;
}

struct Case {
  const char* schedule;
  int accumulate;
};

class CustomMse : public ::testing::TestWithParam<Case> {};

TEST_P(CustomMse, TrainsBitForBitLikeBuiltInMse) {
  const Case c = GetParam();
  const std::string name = std::string(c.schedule) + "_" + std::to_string(c.accumulate);
  sluice_trainer* builtin = create(config("mse", c.schedule, c.accumulate));
  ASSERT_EQ(sluice_trainer_start(builtin), SLUICE_OK) << sluice_last_error();
  const std::vector<float> expected = train_and_save(builtin, kSteps * c.accumulate, scratch("mse_" + name + ".h5"));

  mse_loss_callback state{0, 0};
  const sluice_loss_ops ops = mse_loss_callback_ops(&state);
  sluice_trainer* custom = create(config("custom", c.schedule, c.accumulate));
  ASSERT_EQ(sluice_trainer_register_loss(custom, &ops), SLUICE_OK) << sluice_last_error();
  ASSERT_EQ(sluice_trainer_start(custom), SLUICE_OK) << sluice_last_error();
  const std::vector<float> losses = train_and_save(custom, kSteps * c.accumulate, scratch("custom_" + name + ".h5"));

  // The last stage's rank (rank 0 under zb-v's V shape) calls it once per micro-batch; no other rank calls it.
  int64_t calls = 0;
  MPI_Allreduce(&state.calls, &calls, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(calls, 4 * kSteps * c.accumulate);
  EXPECT_TRUE(state.calls == 0 || state.calls == calls);
  EXPECT_EQ(0, std::memcmp(losses.data(), expected.data(), losses.size() * sizeof(float))) << "reported losses";
  std::vector<float> x, y;
  samples(99, x, y);
  float eval_builtin = 0, eval_custom = 1;
  ASSERT_EQ(sluice_evaluate(builtin, x.data(), y.data(), kBatch, &eval_builtin), SLUICE_OK) << sluice_last_error();
  ASSERT_EQ(sluice_evaluate(custom, x.data(), y.data(), kBatch, &eval_custom), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(eval_custom, eval_builtin) << "sluice_evaluate";
  if (world_rank() == 0) {
    const auto a = sluice::capi_test::read_checkpoint_tensors(scratch("mse_" + name + ".h5"));
    const auto b = sluice::capi_test::read_checkpoint_tensors(scratch("custom_" + name + ".h5"));
    ASSERT_EQ(a.size(), b.size());
    for (const auto& [path, values] : a) {
      ASSERT_EQ(values.size(), b.at(path).size()) << path;
      EXPECT_EQ(0, std::memcmp(values.data(), b.at(path).data(), values.size() * sizeof(float))) << path;
    }
  }
  sluice_trainer_destroy(custom);
  sluice_trainer_destroy(builtin);
}

INSTANTIATE_TEST_SUITE_P(Schedules, CustomMse,
                         ::testing::Values(Case{"1f1b", 1}, Case{"zb-v", 1}, Case{"gpipe", 1}, Case{"1f1b", 2}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.schedule == std::string("zb-v") ? "zbv" : info.param.schedule) +
                                  "_accumulate" + std::to_string(info.param.accumulate);
                         });

TEST(CustomLoss, AFailingCallbackFailsTheStepEverywhereAndTheTrainerGoesOn) {
  mse_loss_callback state{0, 6};  // the second step's second micro-batch (1f1b: the last stage is rank 1)
  const sluice_loss_ops ops = mse_loss_callback_ops(&state);
  sluice_trainer* t = create(config("custom", "1f1b"));
  ASSERT_EQ(sluice_trainer_register_loss(t, &ops), SLUICE_OK);
  ASSERT_EQ(sluice_trainer_start(t), SLUICE_OK) << sluice_last_error();
  std::vector<float> x, y;
  samples(0, x, y);
  EXPECT_EQ(sluice_train_step(t, x.data(), y.data(), kBatch, nullptr), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(sluice_train_step(t, x.data(), y.data(), kBatch, nullptr), SLUICE_ERROR_CALLBACK);
  EXPECT_NE(std::string(sluice_last_error()).find("loss callback (loss: custom) returned 3"), std::string::npos)
      << sluice_last_error();
  EXPECT_EQ(sluice_train_step(t, x.data(), y.data(), kBatch, nullptr), SLUICE_OK) << sluice_last_error();
  // sluice_evaluate uses the callback too; a failure there is agreed as well (no rank waits in the loss sum).
  state.fail_at = state.calls + 2;
  EXPECT_EQ(sluice_evaluate(t, x.data(), y.data(), kBatch, nullptr), SLUICE_ERROR_CALLBACK);
  EXPECT_NE(std::string(sluice_last_error()).find("loss callback"), std::string::npos) << sluice_last_error();
  sluice_stats stats = SLUICE_STATS_INIT;
  ASSERT_EQ(sluice_trainer_stats(t, &stats), SLUICE_OK);
  EXPECT_EQ(stats.steps, 2);  // the failed step applied nothing
  sluice_trainer_destroy(t);
}

TEST(CustomLoss, StartRefusesAMissingOrUnneededLossOnEveryRank) {
  mse_loss_callback state{0, 0};
  const sluice_loss_ops ops = mse_loss_callback_ops(&state);
  for (int registered_on : {-1, 1}) {  // nobody; rank 1 only
    sluice_trainer* t = create(config("custom", "1f1b"));
    if (world_rank() == registered_on) {
      ASSERT_EQ(sluice_trainer_register_loss(t, &ops), SLUICE_OK);
    }
    EXPECT_EQ(sluice_trainer_start(t), SLUICE_ERROR_CONFIG);
    EXPECT_NE(std::string(sluice_last_error()).find("loss: custom"), std::string::npos) << sluice_last_error();
    sluice_trainer_destroy(t);
  }
  sluice_trainer* t = create(config("mse", "1f1b"));
  ASSERT_EQ(sluice_trainer_register_loss(t, &ops), SLUICE_OK);
  EXPECT_EQ(sluice_trainer_start(t), SLUICE_ERROR_CONFIG);
  EXPECT_NE(std::string(sluice_last_error()).find("loss: mse"), std::string::npos) << sluice_last_error();
  sluice_trainer_destroy(t);
}

TEST(CustomLoss, RegistrationErrors) {
  mse_loss_callback state{0, 0};
  sluice_loss_ops ops = mse_loss_callback_ops(&state);
  sluice_trainer* t = create(config("custom", "1f1b"));
  EXPECT_EQ(sluice_trainer_register_loss(t, nullptr), SLUICE_ERROR_INVALID_ARGUMENT);
  sluice_loss_ops unsized{};
  EXPECT_EQ(sluice_trainer_register_loss(t, &unsized), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sluice_last_error()).find("SLUICE_LOSS_OPS_INIT"), std::string::npos);
  // A newer caller's struct with a field this library does not know set: refused, not ignored.
  struct Newer {
    sluice_loss_ops ops;
    void* unknown;
  } newer{mse_loss_callback_ops(&state), &state};
  newer.ops.struct_size = sizeof(Newer);
  EXPECT_EQ(sluice_trainer_register_loss(t, &newer.ops), SLUICE_ERROR_UNSUPPORTED);
  sluice_loss_ops no_function = SLUICE_LOSS_OPS_INIT;
  EXPECT_EQ(sluice_trainer_register_loss(t, &no_function), SLUICE_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(sluice_trainer_register_loss(t, &ops), SLUICE_OK);
  EXPECT_EQ(sluice_trainer_register_loss(t, &ops), SLUICE_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(sluice_trainer_start(t), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(sluice_trainer_register_loss(t, &ops), SLUICE_ERROR_STATE);
  sluice_trainer_destroy(t);
}

}  // namespace
