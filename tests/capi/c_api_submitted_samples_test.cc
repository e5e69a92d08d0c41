// Samples from where the solver has them (sluice_submit_samples, sluice_train_submitted): a run whose samples are
// scattered over every rank (different counts, one rank with none) ends with the same /model and /optimizer, bit for
// bit, as a run fed the same samples in the same global (rank-major) order through sluice_train_step; a replay
// buffer saved mid-run (wrapped around) and resumed ends bitwise equal to an uninterrupted run; bad arguments on ONE
// rank give every rank the documented status and leave the trainer usable. Run with 2 ranks (2 stages) and 4 ranks
// (2 stages x 2 replicas).
#include <gtest/gtest.h>
#include <mpi.h>

#include <sluice/sluice.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "checkpoint/summary.h"
#include "tests/capi/checkpoint_tensors.h"
#include "tests/capi/run_test_support.h"

namespace {

constexpr int kInputs = 5;
constexpr int kOutputs = 3;
constexpr int kBatch = 8;  // global batch: all replicas together
constexpr int kSteps = 5;

using sluice::testing::fresh_dir;
using sluice::testing::world_rank;
using sluice::testing::world_size;
using Tensors = std::map<std::string, std::vector<float>>;

// Two stages, AdamW and dropout (dropout keys depend on the sample's place in the stream: it must match too).
std::string config(const std::string& data_extra,
                   const std::string& pipeline = "{stages: 2, schedule: 1f1b, microbatches: 2}") {
  return "model:\n  inputs: " + std::to_string(kInputs) +
         "\n  layers:\n    - {type: linear, outputs: 8}\n    - {type: dropout, p: 0.1}\n    - {type: tanh}\n"
         "    - {type: linear, outputs: " +
         std::to_string(kOutputs) + "}\npipeline: " + pipeline + "\n" +
         "optimizer: {type: adamw, lr: 0.02}\ndata: {type: external, batch: " + std::to_string(kBatch) + data_extra +
         "}\nseed: 7\n";
}

// The job's samples in their global order: sample i of every stream is a function of i only.
struct Samples {
  std::vector<float> x, y;
  explicit Samples(int count) : x(count * kInputs), y(count * kOutputs) {
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.37 * i));
    for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(std::cos(0.71 * i));
  }
};

sluice_trainer* started(const std::string& yaml) { return sluice::testing::started_trainer(yaml); }

// How many of a call's `total` samples each rank submits: uneven, and on every other call one rank submits none
// (which one moves). The global order is rank-major, so rank r's share is the slice after ranks 0..r-1's.
std::vector<int> shares(int total, int call) {
  const int ranks = world_size();
  const int silent = call % 2 == 0 ? (call / 2) % ranks : -1;
  const int last_active = silent == ranks - 1 ? ranks - 2 : ranks - 1;
  std::vector<int> counts(ranks, 0);
  int left = total;
  for (int r = 0; r < ranks; ++r) {
    if (r == silent) continue;
    counts[r] = r == last_active ? left : std::min(left, 2 * r + 3);
    left -= counts[r];
  }
  return counts;
}

// Submits samples [first, first + total) of `all`, scattered over the ranks as shares(total, call) says.
void submit(sluice_trainer* t, const Samples& all, int first, int total, int call) {
  const std::vector<int> counts = shares(total, call);
  int offset = first;
  for (int r = 0; r < world_rank(); ++r) offset += counts[r];
  const int mine = counts[world_rank()];
  ASSERT_SLUICE_OK(sluice_submit_samples(t, mine ? &all.x[offset * kInputs] : nullptr,
                                         mine ? &all.y[offset * kOutputs] : nullptr, mine));
}

Tensors saved_tensors(sluice_trainer* t, const std::string& name) {
  const std::string file = fresh_dir(name) + ".h5";
  EXPECT_EQ(sluice_save_checkpoint(t, file.c_str()), SLUICE_OK) << sluice_last_error();
  return sluice::capi_test::read_checkpoint_tensors(file);
}

void expect_bitwise_equal(const Tensors& got, const Tensors& expected) {
  ASSERT_EQ(got.size(), expected.size());
  ASSERT_FALSE(got.empty());
  for (const auto& [path, values] : expected) {
    ASSERT_EQ(got.count(path), 1u) << path;
    EXPECT_EQ(got.at(path), values) << path << " differs";
  }
}

int replicas() { return world_size() / 2; }

// Trains kSteps steps both ways under `pipeline` and compares.
void expect_routed_equals_direct(const std::string& pipeline) {
  const Samples all(kSteps * kBatch);
  // Fed directly: replica r passes rows [r * rows, (r + 1) * rows) of each step's global batch.
  sluice_trainer* direct = started(config("", pipeline));
  const int rows = kBatch / replicas();
  const int replica = world_rank() / 2;
  std::vector<float> direct_losses;
  for (int step = 0; step < kSteps; ++step) {
    const int first = step * kBatch + replica * rows;
    float loss = NAN;
    ASSERT_SLUICE_OK(sluice_train_step(direct, &all.x[first * kInputs], &all.y[first * kOutputs], rows, &loss));
    direct_losses.push_back(loss);
  }
  const Tensors expected = saved_tensors(direct, "direct");
  sluice_trainer_destroy(direct);

  // Submitted from every rank in uneven calls that do not line up with the steps.
  sluice_trainer* routed = started(config("", pipeline));
  std::vector<float> routed_losses;
  submit(routed, all, 0, 13, 0);
  int submitted = 13;
  for (int step = 0; step < kSteps; ++step) {
    if (submitted < (step + 1) * kBatch) {
      submit(routed, all, submitted, kSteps * kBatch - submitted, 1);
      submitted = kSteps * kBatch;
    }
    float loss = NAN;
    ASSERT_SLUICE_OK(sluice_train_submitted(routed, step % 2 ? kBatch : 0, &loss));  // 0: data.batch
    routed_losses.push_back(loss);
  }
  int64_t held = -1;
  ASSERT_SLUICE_OK(sluice_submitted_count(routed, &held));
  EXPECT_EQ(held, 0);
  expect_bitwise_equal(saved_tensors(routed, "routed"), expected);
  EXPECT_EQ(routed_losses, direct_losses);
  sluice_trainer_destroy(routed);
}

TEST(CApiSubmittedSamples, ScatteredSamplesTrainBitwiseLikeTrainStepInGlobalOrder) {
  expect_routed_equals_direct("{stages: 2, schedule: 1f1b, microbatches: 2}");
}

// ZB-V puts the first and the last stage on the same rank (the V's two ends): both sides go to one audience.
TEST(CApiSubmittedSamples, ScatteredSamplesTrainBitwiseUnderZbV) {
  expect_routed_equals_direct("{stages: 2, schedule: zb-v, chunks: 2, microbatches: 2}");
}

// With a replay buffer of 12 samples and 8 new ones per step the buffer wraps; a checkpoint after step 3 resumed in
// a new trainer continues with the same buffer contents, order and draw counter. The same file loads under another
// pipeline layout, and is refused under another capacity.
TEST(CApiSubmittedSamples, ReplayBufferResumesBitwiseFromAMidRunCheckpoint) {
  const std::string yaml = config(", replay: {capacity: 12}");
  const Samples all(kSteps * kBatch);
  const std::string mid = fresh_dir("replay_mid") + ".h5";
  sluice_trainer* uninterrupted = started(yaml);
  for (int step = 0; step < kSteps; ++step) {
    submit(uninterrupted, all, step * kBatch, kBatch, step);
    ASSERT_SLUICE_OK(sluice_train_submitted(uninterrupted, kBatch, nullptr));
    if (step == 2) {
      ASSERT_SLUICE_OK(sluice_save_checkpoint(uninterrupted, mid.c_str()));
    }
  }
  int64_t held = -1;
  ASSERT_SLUICE_OK(sluice_submitted_count(uninterrupted, &held));
  EXPECT_EQ(held, 12);
  const Tensors expected = saved_tensors(uninterrupted, "replay_whole");
  sluice_trainer_destroy(uninterrupted);

  // The file holds the buffer, oldest first, and the draw counter (what `sluice inspect` shows).
  const sluice::checkpoint::CheckpointSummary summary = sluice::checkpoint::summarize(mid);
  EXPECT_TRUE(summary.checksums_verified) << summary.checksum_error;
  EXPECT_EQ(summary.train_ints.at("samples_held"), 12);
  EXPECT_EQ(summary.train_ints.at("samples_draws"), 3);
  ASSERT_EQ(summary.samples.size(), 2u);
  EXPECT_EQ(summary.samples[0].name, "inputs");
  EXPECT_EQ(summary.samples[0].dims, (std::vector<int64_t>{12, kInputs}));
  EXPECT_EQ(summary.samples[1].dims, (std::vector<int64_t>{12, kOutputs}));

  sluice_trainer* resumed = started(yaml);
  int64_t step = -1;
  ASSERT_SLUICE_OK(sluice_trainer_resume(resumed, mid.c_str(), &step));
  ASSERT_EQ(step, 3);
  ASSERT_SLUICE_OK(sluice_submitted_count(resumed, &held));
  EXPECT_EQ(held, 12);
  for (; step < kSteps; ++step) {
    submit(resumed, all, static_cast<int>(step) * kBatch, kBatch, static_cast<int>(step));
    ASSERT_SLUICE_OK(sluice_train_submitted(resumed, kBatch, nullptr));
  }
  expect_bitwise_equal(saved_tensors(resumed, "replay_resumed"), expected);
  sluice_trainer_destroy(resumed);

  // Another pipeline layout (ZB-V: first and last stage on rank 0) gets the held samples on its own stage ranks.
  sluice_trainer* relaid =
      started(config(", replay: {capacity: 12}", "{stages: 2, schedule: zb-v, chunks: 2, microbatches: 2}"));
  ASSERT_SLUICE_OK(sluice_trainer_resume(relaid, mid.c_str(), &step));
  ASSERT_SLUICE_OK(sluice_submitted_count(relaid, &held));
  EXPECT_EQ(held, 12);
  ASSERT_SLUICE_OK(sluice_train_submitted(relaid, kBatch, nullptr));
  sluice_trainer_destroy(relaid);

  // Another capacity would draw other batches: the restart is refused, naming the key.
  sluice_trainer* other = started(config(", replay: {capacity: 16}"));
  EXPECT_EQ(sluice_trainer_resume(other, mid.c_str(), &step), SLUICE_ERROR_CHECKPOINT);
  EXPECT_NE(std::string(sluice_last_error()).find("data.replay.capacity"), std::string::npos) << sluice_last_error();
  sluice_trainer_destroy(other);
}

// The replay buffer's batches are not the FIFO's: the same samples train to other parameters (the draws shuffle).
TEST(CApiSubmittedSamples, ReplayBufferDrawsShuffledBatches) {
  const Samples all(2 * kBatch);
  Tensors result[2];
  const std::string extras[2] = {"", ", replay: {capacity: 16}"};
  for (int i = 0; i < 2; ++i) {
    sluice_trainer* t = started(config(extras[i]));
    submit(t, all, 0, 2 * kBatch, 1);
    ASSERT_SLUICE_OK(sluice_train_submitted(t, kBatch, nullptr));
    result[i] = saved_tensors(t, "shuffled_" + std::to_string(i));
    sluice_trainer_destroy(t);
  }
  EXPECT_NE(result[0], result[1]);
}

void expect_everywhere(sluice_status got, sluice_status expected, const std::string& needle) {
  EXPECT_EQ(got, expected) << sluice_last_error();
  EXPECT_NE(std::string(sluice_last_error()).find(needle), std::string::npos) << sluice_last_error();
}

TEST(CApiSubmittedSamples, BadArgumentsOnOneRankFailEveryRankAndNobodyHangs) {
  sluice_trainer* t = started(config(""));
  const Samples all(kBatch);
  const bool odd_one = world_rank() == world_size() - 1;
  const std::string last = "rank " + std::to_string(world_size() - 1);
  expect_everywhere(sluice_submit_samples(t, all.x.data(), all.y.data(), odd_one ? -1 : 1),
                    SLUICE_ERROR_INVALID_ARGUMENT, last);
  expect_everywhere(sluice_submit_samples(t, odd_one ? nullptr : all.x.data(), all.y.data(), 1),
                    SLUICE_ERROR_INVALID_ARGUMENT, "inputs is NULL");
  expect_everywhere(sluice_submit_samples(t, all.x.data(), odd_one ? nullptr : all.y.data(), 1),
                    SLUICE_ERROR_INVALID_ARGUMENT, "targets is NULL");
  int64_t held = -1;
  ASSERT_SLUICE_OK(sluice_submitted_count(t, &held));
  EXPECT_EQ(held, 0);  // nothing of a refused call is kept

  // Too few samples held; a batch the replicas cannot share; a negative batch on one rank only.
  ASSERT_SLUICE_OK(sluice_submit_samples(t, all.x.data(), all.y.data(), world_rank() == 0 ? kBatch - 2 : 0));
  expect_everywhere(sluice_train_submitted(t, kBatch, nullptr), SLUICE_ERROR_STATE, "are held");
  if (replicas() > 1) {
    expect_everywhere(sluice_train_submitted(t, 3, nullptr), SLUICE_ERROR_INVALID_ARGUMENT, "replicas");
  }
  expect_everywhere(sluice_train_submitted(t, odd_one ? -4 : 2, nullptr), SLUICE_ERROR_INVALID_ARGUMENT, last);
  // A rank that found a problem of its own joins the others' call.
  const sluice_status joined = odd_one ? sluice_join_with_error(t, "sluice_train_submitted",
                                                                SLUICE_ERROR_INVALID_ARGUMENT, "my arrays are bad")
                                       : sluice_train_submitted(t, 2, nullptr);
  expect_everywhere(joined, SLUICE_ERROR_INVALID_ARGUMENT, "my arrays are bad");
  ASSERT_SLUICE_OK(sluice_submitted_count(t, &held));
  EXPECT_EQ(held, kBatch - 2);  // failed steps consumed nothing

  // Still usable: two more samples make a full batch. One rank asking for another (valid) batch than the others is
  // caught before any sample moves.
  ASSERT_SLUICE_OK(sluice_submit_samples(t, all.x.data(), all.y.data(), world_rank() == 0 ? 2 : 0));
  expect_everywhere(sluice_train_submitted(t, odd_one ? kBatch / 2 : kBatch, nullptr), SLUICE_ERROR_INVALID_ARGUMENT,
                    "different batch sizes");
  ASSERT_SLUICE_OK(sluice_train_submitted(t, kBatch, nullptr));
  sluice_stats stats = SLUICE_STATS_INIT;
  ASSERT_SLUICE_OK(sluice_trainer_stats(t, &stats));
  EXPECT_EQ(stats.steps, 1);
  EXPECT_EQ(sluice_submitted_count(t, nullptr), SLUICE_ERROR_INVALID_ARGUMENT);
  sluice_trainer_destroy(t);
}

// A NULL handle has no communicator to agree on: refused locally; a trainer that is not started: STATE everywhere.
TEST(CApiSubmittedSamples, NullHandleAndUnstartedTrainerAreRefused) {
  const Samples all(1);
  int64_t held = -1;
  EXPECT_EQ(sluice_submit_samples(nullptr, all.x.data(), all.y.data(), 1), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(sluice_train_submitted(nullptr, kBatch, nullptr), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(sluice_submitted_count(nullptr, &held), SLUICE_ERROR_INVALID_ARGUMENT);
  sluice_trainer* t = nullptr;
  ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, config("").c_str(), &t));
  expect_everywhere(sluice_submit_samples(t, all.x.data(), all.y.data(), 1), SLUICE_ERROR_STATE, "not started");
  expect_everywhere(sluice_train_submitted(t, kBatch, nullptr), SLUICE_ERROR_STATE, "not started");
  expect_everywhere(sluice_submitted_count(t, &held), SLUICE_ERROR_STATE, "not started");
  sluice_trainer_destroy(t);
}

}  // namespace
