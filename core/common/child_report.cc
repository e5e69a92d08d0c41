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
#include <optional>
#include <thread>

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

// Signals a reader dies of when the code it runs faults: what a crafted file does to libhdf5. Any other signal
// came from outside (the OOM killer's SIGKILL, a job's SIGTERM, ^C) and says nothing about the file, so it must not
// be reported as a damaged file (a directory resume would skip a good checkpoint and lose progress).
bool is_crash_signal(int signal) {
  return signal == SIGSEGV || signal == SIGBUS || signal == SIGABRT || signal == SIGFPE || signal == SIGILL ||
         signal == SIGTRAP || signal == SIGSYS;
}

// How long a child that closed its report (or was sent SIGKILL) gets to be reaped: exit handlers, or a process
// stuck in the kernel on a file system that does not answer. Past it the caller goes on without the status.
constexpr std::chrono::seconds kReapGrace{10};

// The child's wait status, or nothing when it cannot be had by `deadline`: the child was reaped elsewhere (the
// host ignores SIGCHLD, or another thread called waitpid(-1)), or it is still there. Sleeps between polls: no spin.
std::optional<int> reap(pid_t child, Clock::time_point deadline) {
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    int status = 0;
    const pid_t done = waitpid(child, &status, WNOHANG);
    if (done == child) return status;
    if (done < 0 && errno != EINTR) return std::nullopt;  // ECHILD: not ours to reap any more
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

std::string status_text(const std::optional<int>& status) {
  if (!status) return "its exit status is unavailable (SIGCHLD ignored or reaped elsewhere in this process)";
  if (WIFEXITED(*status)) return "exit status " + std::to_string(WEXITSTATUS(*status));
  return "status " + std::to_string(*status);
}

void throw_signal(int signal, const std::string& subject) {
  const std::string name = std::string(" (signal ") + std::to_string(signal) + ", " + strsignal(signal) + ")";
  if (is_crash_signal(signal)) {
    throw Error(ErrorCode::kCheckpoint, subject + ": the HDF5 library crashed" + name +
                                            " reading it; the file is corrupt or not a Sluice checkpoint");
  }
  throw Error(ErrorCode::kIo, subject + ": the reading process was killed" + name +
                                  " before it finished (out of memory, or the job is ending); the file was not judged");
}

void throw_outcome(const std::optional<int>& status, const std::string& report, const std::string& subject) {
  if (status && WIFSIGNALED(*status)) throw_signal(WTERMSIG(*status), subject);
  if (report.size() == 1 && report[0] == kDone) return;
  if (report.empty()) {
    throw Error(ErrorCode::kInternal, subject + ": the reading process ended without reporting a result; " +
                                          status_text(status));
  }
  if (report[0] == kFailed && report.size() >= 2) {
    throw Error(static_cast<ErrorCode>(static_cast<unsigned char>(report[1])), report.substr(2));
  }
  if (report[0] == kOtherFailure) throw Error(ErrorCode::kInternal, report.substr(1));
  throw Error(ErrorCode::kInternal, subject + ": the reading process sent a malformed report (" +
                                        std::to_string(report.size()) + " bytes, first " +
                                        std::to_string(static_cast<unsigned char>(report[0])) + "); " +
                                        status_text(status));
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
    reap(child, Clock::now() + kReapGrace);  // a child stuck in the kernel is left behind rather than waited for
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%g", timeout_seconds);
    throw Error(ErrorCode::kTimeout, subject + ": reading it did not finish within " + seconds + " s (" +
                                         timeout_source +
                                         "); the reading process was killed. The file may be corrupt (HDF5 "
                                         "looping on it) or on a file system that does not answer");
  }
  std::optional<int> status = reap(child, Clock::now() + kReapGrace);
  if (!status && kill(child, 0) == 0) {  // reported, but hangs on its way out (exit handlers): its verdict stands
    kill(child, SIGKILL);
    status = reap(child, Clock::now() + kReapGrace);
    if (status && WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL) status = std::nullopt;  // our own kill
  }
  throw_outcome(status, report, subject);
}

}  // namespace sluice
