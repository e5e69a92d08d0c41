// Absurd sizes through the C API: a batch or width whose products overflow is a configuration or argument
// error naming the key, never SLUICE_ERROR_INTERNAL (which says "a bug in Sluice") and never a crash.
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>

#include <sluice/sluice.h>

#include "tests/capi/misuse_test_support.h"

namespace {

using namespace capi_test;  // NOLINT: sizes and data of the misuse tests

std::string config(const std::string& inputs, const std::string& batch) {
  return "model:\n"
         "  inputs: " + inputs + "\n"
         "  layers:\n"
         "    - {type: linear, outputs: " + std::to_string(kOutputs) + "}\n"
         "pipeline: {stages: 1, microbatches: " + std::to_string(kMicrobatches) + "}\n"
         "optimizer: {type: sgd, lr: 0.1}\n"
         "data: {type: external, batch: " + batch + "}\n";
}

// The status of creating a trainer from `text`, with its message in `message`.
sluice_status create_status(const std::string& text, std::string& message) {
  sluice_trainer* trainer = nullptr;
  const sluice_status status = sluice_trainer_create(MPI_COMM_SELF, text.c_str(), &trainer);
  message = sluice_last_error();
  sluice_trainer_destroy(trainer);
  return status;
}

TEST(Sizes, AnOverflowingBatchIsAConfigErrorNamingTheKey) {
  std::string message;
  EXPECT_EQ(create_status(config("4", "2305843009213693960"), message), SLUICE_ERROR_CONFIG) << message;
  EXPECT_NE(message.find("data.batch (line 7): 2305843009213693960 (data.batch) × 4 (model.inputs) × 4 bytes "
                         "overflows a 64-bit size"),
            std::string::npos)
      << message;
}

TEST(Sizes, AnOverflowingWidthIsAConfigErrorNamingTheKey) {
  std::string message;
  EXPECT_EQ(create_status(config("2305843009213693952", "8"), message), SLUICE_ERROR_CONFIG) << message;
  EXPECT_NE(message.find("model.inputs (line 2): 2305843009213693952 features exceed the largest matrix dimension"),
            std::string::npos)
      << message;
}

// A batch the config allows but this machine cannot hold: an argument error naming bytes, not INTERNAL.
TEST(Sizes, AStepBatchTooLargeForMemoryIsAnArgumentError) {
  sluice_trainer* trainer = nullptr;
  ASSERT_EQ(sluice_trainer_create(MPI_COMM_SELF, config("4", "8").c_str(), &trainer), SLUICE_OK)
      << sluice_last_error();
  ASSERT_EQ(sluice_trainer_start(trainer), SLUICE_OK) << sluice_last_error();
  Data data;
  for (const int64_t rows : {int64_t{1} << 42, int64_t{1} << 62}) {
    const sluice_status status = sluice_train_step(trainer, data.inputs.data(), data.targets.data(), rows, nullptr);
    const std::string message = sluice_last_error();
    EXPECT_EQ(status, SLUICE_ERROR_INVALID_ARGUMENT) << rows << ": " << message;
    EXPECT_NE(message.find("bytes"), std::string::npos) << message;
  }
  // The trainer stays usable.
  EXPECT_EQ(sluice_train_step(trainer, data.inputs.data(), data.targets.data(), kBatch, nullptr), SLUICE_OK)
      << sluice_last_error();
  sluice_trainer_destroy(trainer);
}

}  // namespace
