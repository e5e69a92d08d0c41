// sluice_set_log: the host decides what Sluice prints. A periodic checkpoint is logged at SLUICE_LOG_INFO to the
// host's callback (with its user_data) when the host asks for INFO, and not at the default WARNING level or with
// SLUICE_LOG_NONE; a bad level is refused. One rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include <sluice/sluice.h>

#include "tests/capi/misuse_test_support.h"
#include "tests/capi/run_test_support.h"

namespace {

using namespace capi_test;  // NOLINT: the shared sizes and data of the C API tests

struct Captured {
  std::vector<std::pair<sluice_log_level, std::string>> messages;
};

void capture(void* user_data, sluice_log_level level, const char* message) {
  static_cast<Captured*>(user_data)->messages.emplace_back(level, message);
}

// One checkpointing step of a fresh trainer (checkpoint.every: 1), which logs "wrote checkpoint".
void checkpointing_step(const std::string& name) {
  const std::string dir = sluice::testing::fresh_dir(name);
  const std::string yaml = "model: {inputs: " + std::to_string(kFeatures) + ", layers: [{type: linear, outputs: " +
                           std::to_string(kOutputs) + "}]}\npipeline: {stages: 1, microbatches: " +
                           std::to_string(kMicrobatches) + "}\noptimizer: {type: sgd, lr: 0.1}\n"
                           "data: {type: external, batch: " + std::to_string(kBatch) + "}\n"
                           "checkpoint: {dir: " + dir + ", every: 1}\n";
  sluice_trainer* t = nullptr;
  ASSERT_SLUICE_OK(sluice_trainer_create(MPI_COMM_WORLD, yaml.c_str(), &t));
  ASSERT_SLUICE_OK(sluice_trainer_start(t));
  Data data;
  ASSERT_SLUICE_OK(sluice_train_step(t, data.inputs.data(), data.targets.data(), kBatch, nullptr));
  sluice_trainer_destroy(t);
}

class Log : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_EQ(sluice_set_log(nullptr, nullptr, SLUICE_LOG_WARNING), SLUICE_OK); }
  Captured captured_;
};

TEST_F(Log, InfoReachesTheHostsCallback) {
  ASSERT_SLUICE_OK(sluice_set_log(capture, &captured_, SLUICE_LOG_INFO));
  checkpointing_step("log_info");
  ASSERT_EQ(captured_.messages.size(), 1u);
  EXPECT_EQ(captured_.messages[0].first, SLUICE_LOG_INFO);
  EXPECT_NE(captured_.messages[0].second.find("wrote checkpoint"), std::string::npos) << captured_.messages[0].second;
  EXPECT_NE(captured_.messages[0].second.find("ckpt_"), std::string::npos) << captured_.messages[0].second;
}

TEST_F(Log, LessImportantLevelsAndNoneAreNotPassedOn) {
  ASSERT_SLUICE_OK(sluice_set_log(capture, &captured_, SLUICE_LOG_WARNING));
  checkpointing_step("log_warning");
  ASSERT_SLUICE_OK(sluice_set_log(capture, &captured_, SLUICE_LOG_NONE));
  checkpointing_step("log_none");
  EXPECT_TRUE(captured_.messages.empty()) << captured_.messages[0].second;
}

TEST_F(Log, ABadLevelIsRefused) {
  EXPECT_EQ(sluice_set_log(capture, &captured_, static_cast<sluice_log_level>(7)), SLUICE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sluice_last_error()).find("max_level 7"), std::string::npos) << sluice_last_error();
}

}  // namespace
