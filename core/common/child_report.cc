#include "core/common/child_report.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "core/common/error.h"

namespace sluice {
namespace {

constexpr char kDone = 0;
constexpr char kFailed = 1;
constexpr char kOtherFailure = 2;

using Clock = std::chrono::steady_clock;

// Reads the report until the child closes the pipe (true) or the deadline passes (false). poll() sleeps in the
// kernel meanwhile: a rank waiting for its probe leaves the core to the simulation.
bool read_report(int fd, bool bounded, Clock::time_point deadline, std::string& report) {
  char buffer[4096];
  for (;;) {
    int wait_ms = 1000;
    if (bounded) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return false;
      wait_ms = static_cast<int>(std::min<long long>(left, 1000));
    }
    pollfd waiting{fd, POLLIN, 0};
    const int ready = poll(&waiting, 1, wait_ms);
    if (ready <= 0) continue;  // EINTR or nothing yet: look at the deadline again
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;  // closed: the child finished or died
    report.append(buffer, static_cast<size_t>(n));
  }
}

int reap(pid_t child) {
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

void throw_outcome(int status, const std::string& report, const std::string& subject) {
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

std::string run_and_report(const std::function<void()>& work) {
  try {
    work();
  } catch (const Error& error) {
    return std::string(1, kFailed) + static_cast<char>(error.code()) + error.what();
  } catch (const std::exception& error) {
    return std::string(1, kOtherFailure) + error.what();
  }
  return std::string(1, kDone);
}

void send_report(int fd, const std::string& report) {
  size_t written = 0;
  while (written < report.size()) {
    const ssize_t n = write(fd, report.data() + written, report.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the caller is gone; nothing left to tell
    written += static_cast<size_t>(n);
  }
  close(fd);
}

void await_report(pid_t child, int report_fd, const std::string& subject, double timeout_seconds,
                  const std::string& timeout_source) {
  const bool bounded = timeout_seconds > 0;
  const Clock::time_point deadline =
      bounded ? Clock::now() + std::chrono::milliseconds(static_cast<long long>(timeout_seconds * 1000))
              : Clock::time_point::max();
  std::string report;
  const bool finished = read_report(report_fd, bounded, deadline, report);
  close(report_fd);
  if (!finished) {
    kill(child, SIGKILL);
    reap(child);
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%g", timeout_seconds);
    throw Error(ErrorCode::kTimeout, subject + ": reading it did not finish within " + seconds + " s (" +
                                         timeout_source +
                                         "); the reading process was killed. The file may be corrupt (HDF5 "
                                         "looping on it) or on a file system that does not answer");
  }
  throw_outcome(reap(child), report, subject);
}

}  // namespace sluice
