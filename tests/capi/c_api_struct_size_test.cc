// The ABI promise of the size-tagged structs (sluice.h, "ABI"; docs/API_ABI.md): a caller built against an older,
// shorter sluice_stats gets its fields and nothing written past its struct_size; a newer, longer sluice_layer_ops
// is accepted while its unknown tail is zero; a missing or too small struct_size is refused naming the struct.
// One rank: a trainer with optimizer.accumulate = 3 and a custom layer.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include <sluice/sluice.h>

#include "tests/capi/misuse_test_support.h"

namespace {

using namespace capi_test;  // NOLINT: the shared sizes, scale layer and data of the C API tests

#define ASSERT_SLUICE_OK(call) ASSERT_EQ((call), SLUICE_OK) << #call << ": " << sluice_last_error()

#define EXPECT_STATUS(call, status, fragment)                                                          \
  do {                                                                                                 \
    const sluice_status actual_ = (call);                                                              \
    const std::string message_ = sluice_last_error();                                                  \
    EXPECT_EQ(actual_, (status)) << #call << " -> " << sluice_status_string(actual_) << ": " << message_; \
    EXPECT_NE(message_.find(fragment), std::string::npos)                                              \
        << #call << ": message \"" << message_ << "\" does not mention \"" << (fragment) << "\"";      \
  } while (0)

constexpr int kAccumulate = 3;

std::string config(const std::string& first_layer) {
  return "model:\n"
         "  inputs: " + std::to_string(kFeatures) + "\n"
         "  layers:\n"
         "    - " + first_layer + "\n"
         "    - {type: linear, outputs: " + std::to_string(kOutputs) + "}\n"
         "pipeline: {stages: 1, schedule: 1f1b, microbatches: " + std::to_string(kMicrobatches) + "}\n"
         "optimizer: {type: sgd, lr: 0.1, accumulate: " + std::to_string(kAccumulate) + "}\n"
         "data: {type: external, batch: " + std::to_string(kBatch) + "}\n";
}

// A started trainer that has made `calls` train_step calls.
class Started : public ::testing::Test {
 protected:
  void start(int calls) {
    ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, config("{type: linear, outputs: 4}").c_str(), &t_));
    ASSERT_SLUICE_OK(sluice_trainer_start(t_));
    for (int i = 0; i < calls; ++i) {
      ASSERT_SLUICE_OK(sluice_train_step(t_, data_.inputs.data(), data_.targets.data(), kBatch, nullptr));
    }
  }
  void TearDown() override { sluice_trainer_destroy(t_); }
  sluice_trainer* t_ = nullptr;
  Data data_;
};

TEST_F(Started, StatsCountTheAccumulationWindow) {
  start(0);
  sluice_stats stats = SLUICE_STATS_INIT;
  const int64_t expected_pending[] = {1, 2, 0, 1};
  const int64_t expected_steps[] = {0, 0, 1, 1};
  for (int call = 0; call < 4; ++call) {
    ASSERT_SLUICE_OK(sluice_train_step(t_, data_.inputs.data(), data_.targets.data(), kBatch, nullptr));
    ASSERT_SLUICE_OK(sluice_trainer_stats(t_, &stats));
    EXPECT_EQ(stats.struct_size, sizeof(sluice_stats));
    EXPECT_EQ(stats.accumulate, kAccumulate);
    EXPECT_EQ(stats.pending_calls, expected_pending[call]) << "after call " << call + 1;
    EXPECT_EQ(stats.steps, expected_steps[call]) << "after call " << call + 1;
  }
}

// An older caller's struct ends before pending_calls: its fields are filled, the bytes after it (here still inside
// our larger struct, standing for the caller's neighbouring memory) keep their guard value.
TEST_F(Started, AnOlderCallersShorterStatsGetsItsFieldsAndNothingPastThem) {
  start(kAccumulate + 1);  // one step done, one call pending
  sluice_stats stats;
  std::memset(&stats, 0xAB, sizeof stats);
  const size_t old_size = offsetof(sluice_stats, pending_calls);
  stats.struct_size = old_size;
  ASSERT_SLUICE_OK(sluice_trainer_stats(t_, &stats));
  EXPECT_EQ(stats.struct_size, old_size);
  EXPECT_EQ(stats.steps, 1);
  EXPECT_GT(stats.last_loss, 0.0);
  EXPECT_GT(stats.peak_stash_bytes, 0);
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(&stats);
  for (size_t i = old_size; i < sizeof stats; ++i) EXPECT_EQ(bytes[i], 0xAB) << "byte " << i << " was written";
}

TEST_F(Started, AMissingOrTooSmallStatsSizeIsRefusedNamingTheStruct) {
  start(0);
  for (size_t size : {size_t{0}, sizeof(size_t), offsetof(sluice_stats, pending_calls) - 1}) {
    sluice_stats stats;
    std::memset(&stats, 0xAB, sizeof stats);
    stats.struct_size = size;
    EXPECT_STATUS(sluice_trainer_stats(t_, &stats), SLUICE_ERROR_INVALID_ARGUMENT, "sluice_stats::struct_size is " +
                                                                                      std::to_string(size));
    EXPECT_NE(std::string(sluice_last_error()).find("SLUICE_STATS_INIT"), std::string::npos);
    EXPECT_EQ(stats.steps, static_cast<int64_t>(0xABABABABABABABABull)) << "written although refused";
  }
}

// A newer caller with a longer struct: served up to this library's size, which struct_size then reports.
TEST_F(Started, ANewerCallersLongerStatsIsFilledUpToTheLibrarysSize) {
  start(1);
  struct Longer {
    sluice_stats known;
    int64_t future_field;
  } longer;
  std::memset(&longer, 0xAB, sizeof longer);
  longer.known.struct_size = sizeof longer;
  ASSERT_SLUICE_OK(sluice_trainer_stats(t_, &longer.known));
  EXPECT_EQ(longer.known.struct_size, sizeof(sluice_stats));
  EXPECT_EQ(longer.known.pending_calls, 1);
  EXPECT_EQ(longer.future_field, static_cast<int64_t>(0xABABABABABABABABull));
}

class LayerOps : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, config("{type: custom, name: scale}").c_str(), &t_));
  }
  void TearDown() override { sluice_trainer_destroy(t_); }
  sluice_trainer* t_ = nullptr;
};

TEST_F(LayerOps, AMissingOrTooSmallSizeIsRefusedNamingTheStruct) {
  sluice_layer_ops ops = scale_ops();
  for (size_t size : {size_t{0}, offsetof(sluice_layer_ops, backward)}) {
    ops.struct_size = size;
    EXPECT_STATUS(sluice_trainer_register_layer(t_, "scale", &ops, nullptr), SLUICE_ERROR_INVALID_ARGUMENT,
                  "sluice_layer_ops::struct_size is " + std::to_string(size));
  }
  ops.struct_size = sizeof ops;
  ASSERT_SLUICE_OK(sluice_trainer_register_layer(t_, "scale", &ops, nullptr));
  ASSERT_SLUICE_OK(sluice_trainer_start(t_));
}

// A caller compiled before `device` was appended: the bytes past its struct_size are not read, so the layer is a host
// layer (device 0) whatever lies there, and it starts on this cpu stage (device 1 would be refused).
TEST_F(LayerOps, AnOlderCallersStructEndingBeforeDeviceGetsHostArrays) {
  sluice_layer_ops ops = scale_ops();
  ops.device = 1;
  ops.struct_size = offsetof(sluice_layer_ops, device);
  ASSERT_SLUICE_OK(sluice_trainer_register_layer(t_, "scale", &ops, nullptr));
  ASSERT_SLUICE_OK(sluice_trainer_start(t_));
}

// A newer caller's struct: a zero tail (fields it leaves at their defaults) is fine, a set unknown field is not.
TEST_F(LayerOps, ALongerStructIsAcceptedOnlyWithAZeroTail) {
  struct Longer {
    sluice_layer_ops known;
    int64_t future_field;
  } longer{};
  longer.known = scale_ops();
  longer.known.struct_size = sizeof longer;
  longer.future_field = 7;
  EXPECT_STATUS(sluice_trainer_register_layer(t_, "scale", &longer.known, nullptr), SLUICE_ERROR_UNSUPPORTED,
                "does not know");
  longer.future_field = 0;
  ASSERT_SLUICE_OK(sluice_trainer_register_layer(t_, "scale", &longer.known, nullptr));
  ASSERT_SLUICE_OK(sluice_trainer_start(t_));
  Data data;
  ASSERT_SLUICE_OK(sluice_train_step(t_, data.inputs.data(), data.targets.data(), kBatch, nullptr));
}

}  // namespace
