// run_isolated (tools/sluice/isolated_run.h): a crash, a hang and an Error in the forked child each come back as a
// clear Error in the caller, and what the child prints reaches the caller's stdout.
#include "tools/sluice/isolated_run.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <iostream>

#include "core/common/error.h"

namespace sluice::tools {
namespace {

using ::testing::HasSubstr;

Error caught(const std::function<void()>& work, double timeout_seconds = 30) {
  try {
    run_isolated(work, "some.h5", timeout_seconds);
  } catch (const Error& error) {
    return error;
  }
  ADD_FAILURE() << "run_isolated returned normally";
  return Error(ErrorCode::kInternal, "");
}

TEST(IsolatedRunTest, WorkThatFinishesReturnsAndItsOutputPassesThrough) {
  ::testing::internal::CaptureStdout();
  run_isolated([] { std::cout << "printed by the child\n"; }, "some.h5", 30);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "printed by the child\n");
}

TEST(IsolatedRunTest, ErrorThrownInTheChildComesBackWithItsCodeAndMessage) {
  const Error error = caught([] { throw Error(ErrorCode::kCheckpoint, "checkpoint 'x': dataset /a missing"); });
  EXPECT_EQ(error.code(), ErrorCode::kCheckpoint);
  EXPECT_STREQ(error.what(), "checkpoint 'x': dataset /a missing");
}

TEST(IsolatedRunTest, CrashInTheChildBecomesAnErrorNamingTheFileAndSignal) {
  const Error error = caught([] { raise(SIGSEGV); });
  EXPECT_EQ(error.code(), ErrorCode::kCheckpoint);
  EXPECT_THAT(error.what(), HasSubstr("some.h5: the HDF5 library crashed (signal 11"));
  EXPECT_THAT(error.what(), HasSubstr("the file is corrupt or not a Sluice checkpoint"));
}

TEST(IsolatedRunTest, HangingChildIsKilledAfterTheTimeout) {
  const auto start = std::chrono::steady_clock::now();
  const Error error = caught([] { pause(); }, 0.5);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(error.code(), ErrorCode::kTimeout);
  EXPECT_THAT(error.what(), HasSubstr("some.h5: reading it did not finish within 0.5 s"));
  EXPECT_THAT(error.what(), HasSubstr("killed"));
  EXPECT_LT(waited, 10.0);
}

}  // namespace
}  // namespace sluice::tools
