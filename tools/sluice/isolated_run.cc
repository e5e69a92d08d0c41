#include "tools/sluice/isolated_run.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "core/common/error.h"

namespace sluice::tools {
namespace {

// What the child reports through its pipe: one byte of status (0 = done, 1 = Error, 2 = other exception), then
// for 1 the ErrorCode as a byte, then the message.
constexpr char kDone = 0;
constexpr char kFailed = 1;
constexpr char kOtherFailure = 2;

void write_all(int fd, const std::string& bytes) {
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent is gone; nothing left to tell
    written += static_cast<size_t>(n);
  }
}

[[noreturn]] void run_child(const std::function<void()>& work, int report_fd) {
  std::string report(1, kDone);
  try {
    work();
  } catch (const Error& error) {
    report = std::string(1, kFailed) + static_cast<char>(error.code()) + error.what();
  } catch (const std::exception& error) {
    report = std::string(1, kOtherFailure) + error.what();
  }
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  write_all(report_fd, report);
  close(report_fd);
  _exit(0);  // no atexit handlers or static destructors of the parent's state (MPI, HDF5) run in the child
}

// Reads the child's report until it closes the pipe, or until the deadline passes (returns false then).
bool read_report(int fd, std::chrono::steady_clock::time_point deadline, std::string& report) {
  char buffer[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd waiting{fd, POLLIN, 0};
    const int ready = poll(&waiting, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;  // closed: the child finished or died
    report.append(buffer, static_cast<size_t>(n));
  }
}

int wait_for(pid_t child) {
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

void throw_child_outcome(int status, const std::string& report, const std::string& subject) {
  if (WIFSIGNALED(status)) {
    throw Error(ErrorCode::kCheckpoint, subject + ": the HDF5 library crashed (signal " +
                                            std::to_string(WTERMSIG(status)) + ", " + strsignal(WTERMSIG(status)) +
                                            ") reading it; the file is corrupt or not a Sluice checkpoint");
  }
  if (report.empty()) {
    throw Error(ErrorCode::kInternal, subject + ": the reading process ended (exit status " +
                                          std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                                          ") without reporting a result");
  }
  if (report[0] == kFailed && report.size() >= 2) {
    throw Error(static_cast<ErrorCode>(static_cast<unsigned char>(report[1])), report.substr(2));
  }
  if (report[0] == kOtherFailure) throw Error(ErrorCode::kInternal, report.substr(1));
}

}  // namespace

void run_isolated(const std::function<void()>& work, const std::string& subject, double timeout_seconds) {
  int fds[2];
  if (pipe(fds) != 0) throw Error(ErrorCode::kIo, subject + ": cannot create a pipe: " + std::strerror(errno));
  std::cout.flush();  // nothing buffered may be printed twice (once by each process)
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    throw Error(ErrorCode::kIo, subject + ": cannot fork a process to read it: " + std::strerror(errno));
  }
  if (child == 0) {
    close(fds[0]);
    run_child(work, fds[1]);
  }
  close(fds[1]);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<long long>(timeout_seconds * 1000));
  std::string report;
  const bool finished = read_report(fds[0], deadline, report);
  close(fds[0]);
  if (!finished) {
    kill(child, SIGKILL);
    wait_for(child);
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%g", timeout_seconds);
    throw Error(ErrorCode::kTimeout, subject + ": reading it did not finish within " + seconds +
                                         " s (--timeout); the reading process was killed. The file may be corrupt "
                                         "(HDF5 looping on it) or on a file system that does not answer");
  }
  throw_child_outcome(wait_for(child), report, subject);
}

}  // namespace sluice::tools
