// run_isolated (tools/sluice/isolated_run.h): a crash, a hang and an Error in the forked child each come back as a
// clear Error in the caller, and what the child prints reaches the caller's stdout.
#include "tools/sluice/isolated_run.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <iostream>

#include "core/common/child_report.h"
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

// The OOM killer's SIGKILL or a job's SIGTERM says nothing about the file: not CHECKPOINT (which a directory resume
// takes as "damaged, skip it" and would lose a good checkpoint), but an I/O error naming the signal.
TEST(IsolatedRunTest, ChildKilledFromOutsideIsNotReportedAsADamagedFile) {
  for (int signal : {SIGKILL, SIGTERM, SIGINT}) {
    const Error error = caught([signal] { raise(signal); });
    EXPECT_EQ(error.code(), ErrorCode::kIo) << signal;
    EXPECT_THAT(error.what(), HasSubstr("some.h5: the reading process was killed (signal " + std::to_string(signal)));
    EXPECT_THAT(error.what(), HasSubstr("the file was not judged"));
  }
  for (int signal : {SIGBUS, SIGABRT, SIGFPE}) {
    EXPECT_EQ(caught([signal] { raise(signal); }).code(), ErrorCode::kCheckpoint) << signal;
  }
}

// A host that ignores SIGCHLD has its children reaped by the kernel: the report still decides, and without one the
// error says the status is unavailable instead of inventing "exit status 0".
TEST(IsolatedRunTest, AHostIgnoringSigchldStillGetsTheVerdict) {
  struct sigaction ignore {}, previous {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGCHLD, &ignore, &previous);
  run_isolated([] {}, "some.h5", 30);
  EXPECT_EQ(caught([] { throw Error(ErrorCode::kCheckpoint, "bad dataset"); }).code(), ErrorCode::kCheckpoint);
  const Error crashed = caught([] { raise(SIGSEGV); });
  sigaction(SIGCHLD, &previous, nullptr);
  EXPECT_EQ(crashed.code(), ErrorCode::kInternal);
  EXPECT_THAT(crashed.what(), HasSubstr("without reporting a result; its exit status is unavailable"));
}

// A report that is not one of the protocol's is not taken as success.
TEST(IsolatedRunTest, AMalformedReportIsAnInternalError) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    send_report(fds[1], std::string(1, '\x07'));
    _exit(0);
  }
  close(fds[1]);
  try {
    await_report(child, fds[0], "some.h5", 30, "test");
    ADD_FAILURE() << "a malformed report was taken as success";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kInternal);
    EXPECT_THAT(error.what(), HasSubstr("some.h5: the reading process sent a malformed report"));
  }
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
