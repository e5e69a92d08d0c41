// One job per checkpoint directory. Two jobs writing into one directory destroy each other's work: each one's
// rotation deletes the other's temporaries and both rename onto the same ckpt_N.h5. A job therefore holds a lock
// file, <dir>/.sluice.lock, for as long as it may write there.
//
// The lock file is created atomically with link(2) from a private temporary that already holds the holder's
// description (host, pid, SLURM_JOB_ID, start time), so a reader never sees a half-written lock. flock/fcntl
// locks are not used: NFS and Lustre mounts often do not support them (or not across nodes), while link() and
// O_EXCL semantics hold on every POSIX file system. A lock whose holder is gone is taken over: the same host and
// a pid that no longer exists, or the SLURM_JOB_ID of this very job (Slurm requeued it after a node failure, and
// the old incarnation cannot still be writing). A holder on another host without that job id cannot be checked
// and counts as alive: the error says how to remove the lock by hand.
// A lock path that exists and is not a regular file (a FIFO, a directory, ...) is refused without being opened,
// with the same file-type check checkpoints get (non_regular_kind in directory.h).
#pragma once

#include <string>

namespace sluice::checkpoint {

// The lock file of `dir`.
std::string lock_file_path(const std::string& dir);

class DirectoryLock {
 public:
  // Takes the lock of `dir`, creating the directory (one level) if needed. Throws Error(kCheckpoint) naming the
  // directory and the holder when another live job holds it, Error(kIo) when the file cannot be written.
  explicit DirectoryLock(const std::string& dir);
  // Removes the lock file if it is still this lock's (never another job's).
  ~DirectoryLock();
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

  // The description of the stale holder this lock replaced ("host h, pid 12, ..."), or "" when the lock was free.
  const std::string& taken_over_from() const { return taken_over_from_; }

 private:
  std::string path_;
  std::string content_;  // what this lock wrote: how release recognises its own file
  std::string taken_over_from_;
};

}  // namespace sluice::checkpoint
