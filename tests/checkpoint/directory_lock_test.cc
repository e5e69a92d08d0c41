// One job per checkpoint directory: a second lock on a held directory fails naming the holder; a lock whose
// holder is gone (same host, dead pid) or that carries this job's SLURM_JOB_ID (a requeue) is taken over; a lock
// is released when its owner goes, and never removes another job's lock.
#include "checkpoint/directory_lock.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "core/common/error.h"

namespace sluice::checkpoint {
namespace {

using ::testing::HasSubstr;

std::string host() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

// A pid that certainly does not run any more: a child that has exited and been reaped.
long dead_pid() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  return child;
}

class DirectoryLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    dir_ = std::string(tmp ? tmp : "/tmp") + "/directory_lock_test";
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    unsetenv("SLURM_JOB_ID");
  }
  void TearDown() override { unsetenv("SLURM_JOB_ID"); }
  void write_lock(const std::string& host_name, long pid, const std::string& job) {
    std::ofstream(lock_file_path(dir_)) << "host=" << host_name << "\npid=" << pid << "\nslurm_job_id=" << job
                                        << "\nstarted=2026-01-01T00:00:00Z\n";
  }
  bool locked() const { return std::filesystem::exists(lock_file_path(dir_)); }
  std::string dir_;
};

TEST_F(DirectoryLockTest, SecondLockFailsNamingTheHolderAndReleaseFreesIt) {
  {
    DirectoryLock first(dir_);
    EXPECT_TRUE(locked());
    EXPECT_EQ(first.taken_over_from(), "");
    try {
      DirectoryLock second(dir_);
      ADD_FAILURE() << "a held directory was locked twice";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::kCheckpoint);
      EXPECT_THAT(error.what(), HasSubstr("checkpoint directory '" + dir_ + "' is in use by another job (host " +
                                          host() + ", pid " + std::to_string(getpid()) + ", SLURM job ?, since "));
    }
    EXPECT_TRUE(locked()) << "the failed attempt must leave the holder's lock alone";
  }
  EXPECT_FALSE(locked());
  DirectoryLock again(dir_);
}

TEST_F(DirectoryLockTest, CreatesAMissingDirectory) {
  dir_ += "/new";
  DirectoryLock lock(dir_);
  EXPECT_TRUE(locked());
}

TEST_F(DirectoryLockTest, ADeadHolderOnThisHostIsTakenOver) {
  const long pid = dead_pid();
  write_lock(host(), pid, "");
  DirectoryLock lock(dir_);
  EXPECT_THAT(lock.taken_over_from(), HasSubstr("pid " + std::to_string(pid)));
}

TEST_F(DirectoryLockTest, ThisJobsOwnSlurmIdIsTakenOver) {
  write_lock("other-node", 1, "4242");  // a node that failed: its pid cannot be checked from here
  setenv("SLURM_JOB_ID", "4242", 1);
  DirectoryLock lock(dir_);
  EXPECT_THAT(lock.taken_over_from(), HasSubstr("host other-node"));
}

TEST_F(DirectoryLockTest, ThisJobsIdDoesNotTakeOverALiveProcessOnThisHost) {
  setenv("SLURM_JOB_ID", "4242", 1);
  DirectoryLock first(dir_);  // e.g. another trainer of this process, in the same job
  EXPECT_THROW(DirectoryLock second(dir_), Error);
}

TEST_F(DirectoryLockTest, AHolderOnAnotherHostCountsAsAlive) {
  write_lock("other-node", 1, "4242");
  setenv("SLURM_JOB_ID", "5151", 1);
  try {
    DirectoryLock lock(dir_);
    ADD_FAILURE() << "another job's lock was taken";
  } catch (const Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("(host other-node, pid 1, SLURM job 4242, since 2026-01-01T00:00:00Z; lock "
                                        "file '" + lock_file_path(dir_) + "')"));
  }
}

TEST_F(DirectoryLockTest, ReleaseNeverRemovesAnotherJobsLock) {
  auto lock = std::make_unique<DirectoryLock>(dir_);
  write_lock("other-node", 7, "99");  // someone removed ours by hand and another job locked the directory
  lock.reset();
  EXPECT_TRUE(locked());
}

}  // namespace
}  // namespace sluice::checkpoint
