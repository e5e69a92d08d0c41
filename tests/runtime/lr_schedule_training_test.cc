// optimizer.lr_schedule in training (2 ranks, 2 pipeline stages):
// - every optimizer step uses scheduled_lr at the optimizer's step count, also with optimizer.accumulate > 1 (the
//   schedule advances per optimizer step, not per call);
// - a cosine run checkpointed midway and resumed ends bit for bit like the uninterrupted run, for 1f1b and zb-v;
// - sluice_set_learning_rate's override (Trainer::set_learning_rate) replaces the schedule, is saved in the
//   checkpoint and restored by a resume (bit for bit again), and 0 returns to the schedule;
// - ranks passing different learning rates fail on every rank with kInvalidArgument.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/config/config_parser.h"
#include "core/data/synthetic_data.h"
#include "core/model/lr_schedule.h"
#include "core/runtime/trainer.h"
#include "core/runtime/trainer_checkpoint.h"
#include "tests/mpi_world.h"

namespace sluice {
namespace {

constexpr int64_t kBatch = 8;
constexpr int kSteps = 8;

std::string shared_path(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

config::Config make_config(const std::string& schedule, const std::string& lr_schedule, int accumulate = 1) {
  const int chunks = schedule == "zb-v" ? 2 : 1;
  return config::parse_config(
      "model:\n  inputs: 6\n  layers:\n    - {type: linear, outputs: 10}\n    - {type: tanh}\n"
      "    - {type: linear, outputs: 10}\n    - {type: relu}\n    - {type: linear, outputs: 3}\n"
      "pipeline: {stages: 2, schedule: " + schedule + ", chunks: " + std::to_string(chunks) +
      ", microbatches: 4}\nloss: mse\n"
      "optimizer: {type: adamw, lr: 0.02, accumulate: " + std::to_string(accumulate) +
      ", lr_schedule: " + lr_schedule + "}\n"
      "data: {type: synthetic, batch: " + std::to_string(kBatch) + "}\nseed: 5\nsteps: " + std::to_string(kSteps) +
      "\n");
}

void train_calls(runtime::Trainer& t, int from, int to) {
  data::SyntheticData source(t.config().seed, t.parts().input_features, t.parts().output_features, data::TargetKind::kRegression);
  std::vector<float> x(kBatch * t.parts().input_features), y(kBatch * t.parts().output_features);
  for (int call = from; call < to; ++call) {
    source.batch(call, 0, kBatch, x.data(), y.data());
    t.train_step(x.data(), y.data(), kBatch);
  }
}

std::map<std::string, std::vector<float>> parameters(runtime::Trainer& t) {
  std::map<std::string, std::vector<float>> out;
  for (const auto& [index, stage] : t.parts().stages) {
    for (model::Parameter* p : stage->parameters()) out[p->qualified_name()] = p->value.to_vector();
  }
  return out;
}

void expect_same_bits(const std::map<std::string, std::vector<float>>& a,
                      const std::map<std::string, std::vector<float>>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, values] : a) {
    ASSERT_EQ(values.size(), b.at(name).size()) << name;
    EXPECT_EQ(0, std::memcmp(values.data(), b.at(name).data(), values.size() * sizeof(float))) << name;
  }
}

TEST(LrScheduleTraining, EachOptimizerStepUsesTheScheduleAtItsCount) {
  for (int accumulate : {1, 3}) {
    const config::Config cfg = make_config("1f1b", "{type: step, step_size: 2, gamma: 0.5}", accumulate);
    runtime::Trainer t(MPI_COMM_WORLD, cfg);
    t.start();
    for (int call = 0; call < 4 * accumulate; ++call) {
      train_calls(t, call, call + 1);
      const int64_t done = t.parts().optimizer->step_count();
      ASSERT_EQ(done, (call + 1) / accumulate) << "accumulate " << accumulate;
      if (done == 0) continue;
      // The lr the last update used: the schedule at the count before it.
      EXPECT_EQ(t.parts().optimizer->lr(), model::scheduled_lr(cfg.optimizer.lr_schedule, 0.02, done - 1))
          << "accumulate " << accumulate << ", call " << call;
    }
    EXPECT_NE(t.parts().optimizer->lr(), 0.02);  // the schedule did decay
  }
}

class LrRestart : public ::testing::TestWithParam<std::string> {};

TEST_P(LrRestart, CosineResumedMidwayEqualsUninterruptedBitForBit) {
  const config::Config cfg = make_config(GetParam(), "{type: cosine, warmup_steps: 2, min_lr: 0.001}");
  const std::string file = shared_path("lr_cosine_" + GetParam() + ".h5");
  runtime::Trainer uninterrupted(MPI_COMM_WORLD, cfg);
  uninterrupted.start();
  train_calls(uninterrupted, 0, kSteps);
  {
    runtime::Trainer first(MPI_COMM_WORLD, cfg);
    first.start();
    train_calls(first, 0, kSteps / 2);
    runtime::save_checkpoint(first, file);
  }
  runtime::Trainer resumed(MPI_COMM_WORLD, cfg);
  resumed.start();
  runtime::load_checkpoint(resumed, file);
  train_calls(resumed, kSteps / 2, kSteps);
  expect_same_bits(parameters(resumed), parameters(uninterrupted));
  EXPECT_EQ(resumed.parts().optimizer->lr(), uninterrupted.parts().optimizer->lr());
}

TEST_P(LrRestart, OverrideIsSavedAndResumedAndZeroReturnsToTheSchedule) {
  const config::Config cfg = make_config(GetParam(), "{type: cosine, min_lr: 0.001}");
  const std::string file = shared_path("lr_override_" + GetParam() + ".h5");
  const double override_lr = 0.0123456789;
  runtime::Trainer uninterrupted(MPI_COMM_WORLD, cfg);
  uninterrupted.start();
  train_calls(uninterrupted, 0, 2);
  uninterrupted.set_learning_rate(override_lr);
  train_calls(uninterrupted, 2, 6);
  EXPECT_EQ(uninterrupted.parts().optimizer->lr(), override_lr);
  {
    runtime::Trainer first(MPI_COMM_WORLD, cfg);
    first.start();
    train_calls(first, 0, 2);
    first.set_learning_rate(override_lr);
    train_calls(first, 2, 4);
    runtime::save_checkpoint(first, file);
  }
  runtime::Trainer resumed(MPI_COMM_WORLD, cfg);
  resumed.start();
  runtime::load_checkpoint(resumed, file);
  EXPECT_EQ(resumed.state().learning_rate_override, override_lr);
  train_calls(resumed, 4, 6);
  expect_same_bits(parameters(resumed), parameters(uninterrupted));

  resumed.set_learning_rate(0.0);  // back to the cosine, at its current position
  train_calls(resumed, 6, 7);
  EXPECT_EQ(resumed.parts().optimizer->lr(), model::scheduled_lr(cfg.optimizer.lr_schedule, 0.02, 6));
}

INSTANTIATE_TEST_SUITE_P(Schedules, LrRestart, ::testing::Values("1f1b", "zb-v"));

TEST(LrScheduleTraining, DifferentLearningRatesOnRanksFailEverywhere) {
  runtime::Trainer t(MPI_COMM_WORLD, make_config("1f1b", "{type: constant}"));
  t.start();
  const double lr = sluice::testing::world_rank() == 0 ? 0.01 : 0.02;
  try {
    t.set_learning_rate(lr);
    FAIL() << "different learning rates were accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find("different learning rates"), std::string::npos) << e.what();
  }
  try {
    t.set_learning_rate(sluice::testing::world_rank() == 1 ? -1.0 : 0.01);
    FAIL() << "a negative learning rate was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
  }
  EXPECT_EQ(t.state().learning_rate_override, 0.0);  // unchanged by the refused calls
  train_calls(t, 0, 1);                         // and the trainer still works
}

}  // namespace
}  // namespace sluice
