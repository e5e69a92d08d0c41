// comm.timeout under the C API, with 2 real processes: a peer stopped (SIGSTOP) in the middle of a step makes
// every live rank's call return SLUICE_ERROR_TIMEOUT naming the stopped rank within about twice the timeout
// (the wait that notices it, then the agreement that names it), while the waiting rank sleeps (comm.wait: block,
// measured with getrusage); and two ranks that make different collective calls (train_step on one,
// save_checkpoint on the other) both get an error naming the mismatch instead of hanging.
#include <gtest/gtest.h>
#include <mpi.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <sluice/sluice.h>

#include "tests/mpi_world.h"

namespace {

using sluice::testing::world_rank;
using sluice::testing::world_size;

constexpr int kFeatures = 4;
constexpr int kBatch = 4;
constexpr double kTimeout = 3.0;

// An identity layer that stops its own process (SIGSTOP) on its `stop_at`-th forward call: the peer that goes
// silent in the middle of a step, as a hung solver or a debugger would make it.
struct Stopper {
  int64_t forward_calls = 0;
  int64_t stop_at = 0;  // 0: never
};

int stopper_forward(void* user_data, const float*, const float* x, float* y, int64_t batch) {
  auto* s = static_cast<Stopper*>(user_data);
  if (++s->forward_calls == s->stop_at) raise(SIGSTOP);
  for (int64_t i = 0; i < batch * kFeatures; ++i) y[i] = x[i];
  return 0;
}

int stopper_backward_input(void*, const float*, const float*, const float* dy, float* dx, int64_t batch) {
  for (int64_t i = 0; i < batch * kFeatures; ++i) dx[i] = dy[i];
  return 0;
}

// Stage 0 (rank 0): a linear layer; stage 1 (rank 1): the stopper.
std::string config(const std::string& wait) {
  return "model:\n"
         "  inputs: 4\n"
         "  layers:\n"
         "    - {type: linear, outputs: 4}\n"
         "    - {type: custom, name: stopper}\n"
         "pipeline: {stages: 2, schedule: 1f1b, microbatches: 2, split: [1, 1]}\n"
         "optimizer: {type: sgd, lr: 0.01}\n"
         "data: {type: external, batch: 4}\n"
         "comm: {timeout: 3, wait: " + wait + "}\n";
}

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + 1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

class StoppedPeer : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(world_size(), 2) << "this test needs 2 ranks";
    ASSERT_EQ(sluice_trainer_create(MPI_COMM_WORLD, config("block").c_str(), &trainer_), SLUICE_OK)
        << sluice_last_error();
    sluice_layer_ops ops = SLUICE_LAYER_OPS_INIT;
    ops.in_features = kFeatures;
    ops.out_features = kFeatures;
    ops.forward = stopper_forward;
    ops.backward_input = stopper_backward_input;
    ASSERT_EQ(sluice_trainer_register_layer(trainer_, "stopper", &ops, &stopper_), SLUICE_OK) << sluice_last_error();
    ASSERT_EQ(sluice_trainer_start(trainer_), SLUICE_OK) << sluice_last_error();
  }
  void TearDown() override { sluice_trainer_destroy(trainer_); }
  sluice_status step() { return sluice_train_step(trainer_, inputs_.data(), targets_.data(), kBatch, nullptr); }

  sluice_trainer* trainer_ = nullptr;
  Stopper stopper_;
  std::vector<float> inputs_ = std::vector<float>(kBatch * kFeatures, 0.5f);
  std::vector<float> targets_ = std::vector<float>(kBatch * kFeatures, 0.25f);
};

TEST_F(StoppedPeer, EveryLiveRankReturnsTimeoutNamingTheStoppedRank) {
  ASSERT_EQ(step(), SLUICE_OK) << sluice_last_error();  // two forward calls of the stopper (2 micro-batches)
  int pid = getpid();
  std::vector<int> pids(2);
  MPI_Allgather(&pid, 1, MPI_INT, pids.data(), 1, MPI_INT, MPI_COMM_WORLD);
  if (world_rank() == 1) stopper_.stop_at = 3;  // the first micro-batch of the next step

  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = cpu_seconds();
  const sluice_status status = step();
  const std::string message = sluice_last_error();
  const double cpu = cpu_seconds() - cpu0;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (world_rank() == 0) {
    kill(pids[1], SIGCONT);  // whatever the outcome, let the stopped rank finish the test
    EXPECT_EQ(status, SLUICE_ERROR_TIMEOUT) << sluice_status_string(status) << ": " << message;
    EXPECT_NE(message.find("rank 1"), std::string::npos) << message;
    // The receive that notices (timeout), then the agreement that names the silent rank (timeout), + slack.
    EXPECT_GE(seconds, kTimeout - 0.1) << message;
    EXPECT_LT(seconds, 2 * kTimeout + 4.0) << message;
    // comm.wait: block sleeps while waiting; a spinning rank would burn about `seconds` CPU-seconds.
    EXPECT_LT(cpu, 0.3 + 0.05 * seconds) << "waited " << seconds << " s and used " << cpu << " CPU-s";
    std::printf("rank 0: TIMEOUT after %.2f s using %.3f CPU-s: %s\n", seconds, cpu, message.c_str());
  } else {
    // Continued after rank 0 gave up: the step's agreement already has rank 0's verdict.
    EXPECT_EQ(status, SLUICE_ERROR_TIMEOUT) << sluice_status_string(status) << ": " << message;
  }
}

class MismatchedCalls : public StoppedPeer {};

TEST_F(MismatchedCalls, TrainStepOnOneRankAndSaveOnTheOtherBothFail) {
  char directory[] = "/tmp/sluice-mismatch.XXXXXX";
  ASSERT_NE(mkdtemp(directory), nullptr);
  const std::string path = std::string(directory) + "/ckpt.h5";
  const auto t0 = std::chrono::steady_clock::now();
  const sluice_status status =
      world_rank() == 0 ? step() : sluice_save_checkpoint(trainer_, path.c_str());
  const std::string message = sluice_last_error();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(status, SLUICE_ERROR_STATE) << sluice_status_string(status) << ": " << message;
  EXPECT_NE(message.find("out of step"), std::string::npos) << message;
  EXPECT_NE(message.find("sluice_train_step"), std::string::npos) << message;
  EXPECT_NE(message.find("sluice_save_checkpoint"), std::string::npos) << message;
  EXPECT_LT(seconds, kTimeout) << message;
  // Both ranks still agree on the call count: the next collective call works on both.
  EXPECT_EQ(step(), SLUICE_OK) << sluice_last_error();
  std::remove(path.c_str());
  rmdir(directory);
}

}  // namespace
