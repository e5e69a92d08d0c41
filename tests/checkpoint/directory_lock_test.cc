// One job per checkpoint directory: a second lock on a held directory fails naming the holder; a lock whose
// holder is gone (same host, dead pid) or that carries this job's SLURM_JOB_ID (a requeue) is taken over; a lock
// is released when its owner goes, and never removes another job's lock. A lock path that is not a regular file
// (a FIFO, a directory, a socket, a device, a symlink to one) is refused naming the path and what it is, without
// opening it: opening a FIFO blocks until a writer comes (issue 28).
#include "checkpoint/directory_lock.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

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

// Each kind of non-regular lock path, made by `make` at the lock's path, and what the error calls it.
struct NonRegularLock {
  const char* kind;
  int (*make)(const char* path);
};

const NonRegularLock kNonRegularLocks[] = {
    {"a FIFO", [](const char* path) { return mkfifo(path, 0600); }},
    {"a directory", [](const char* path) { return mkdir(path, 0700); }},
    {"a socket", [](const char* path) { return mknod(path, S_IFSOCK | 0600, 0); }},
    {"a character device", [](const char* path) { return symlink("/dev/null", path); }},
    {"a FIFO", [](const char* path) {  // a symlink to a FIFO: stat follows it
       const std::string target = std::string(path) + ".target";
       return mkfifo(target.c_str(), 0600) == 0 ? symlink(target.c_str(), path) : -1;
     }},
};

TEST_F(DirectoryLockTest, ANonRegularLockPathIsRefusedNamingItWithoutBlocking) {
  alarm(30);  // the FIFO used to block this test in open(2) forever
  for (const NonRegularLock& lock_kind : kNonRegularLocks) {
    SCOPED_TRACE(lock_kind.kind);
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    const std::string path = lock_file_path(dir_);
    ASSERT_EQ(lock_kind.make(path.c_str()), 0);
    try {
      DirectoryLock lock(dir_);
      ADD_FAILURE() << "a lock was taken over " << lock_kind.kind;
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::kCheckpoint);
      EXPECT_THAT(error.what(), HasSubstr("checkpoint directory lock '" + path + "' is " + lock_kind.kind +
                                         ", not a lock file"));
    }
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::symlink_status(path))) << "the path was removed";
  }
  alarm(0);
}

TEST_F(DirectoryLockTest, ReleaseDoesNotBlockOnALockReplacedByAFifo) {
  alarm(30);
  auto lock = std::make_unique<DirectoryLock>(dir_);
  std::filesystem::remove(lock_file_path(dir_));
  ASSERT_EQ(mkfifo(lock_file_path(dir_).c_str(), 0600), 0);
  lock.reset();
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::symlink_status(lock_file_path(dir_))));
  alarm(0);
}

}  // namespace
}  // namespace sluice::checkpoint
