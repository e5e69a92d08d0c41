#include "checkpoint/isolated_read.h"

#include <dlfcn.h>
#include <link.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <vector>

#include "core/comm/agreement.h"
#include "core/comm/wait_settings.h"
#include "core/common/child_report.h"
#include "core/common/error.h"
#include "core/common/log.h"

extern char** environ;

namespace sluice::checkpoint {
namespace {

constexpr double kProbeBytesPerSecond = 8.0 * 1024 * 1024;
// The descriptor the probe writes its report to (checkpoint_probe.cc: --report-fd).
constexpr int kReportFd = 3;

bool is_executable_file(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && access(path.c_str(), X_OK) == 0;
}

// The directory of the binary (shared library or executable) this function was linked into. For the main
// executable glibc reports argv[0], which may be relative to a directory since left: /proc/self/exe then.
std::string own_binary_directory() {
  Dl_info info{};
  link_map* map = nullptr;
  if (dladdr1(reinterpret_cast<const void*>(&own_binary_directory), &info, reinterpret_cast<void**>(&map),
              RTLD_DL_LINKMAP) == 0) {
    return "";
  }
  const bool in_executable = map == nullptr || map->l_name == nullptr || map->l_name[0] == '\0';
  std::error_code error;
  const std::filesystem::path binary =
      std::filesystem::canonical(in_executable ? "/proc/self/exe" : map->l_name, error);
  return error ? "" : binary.parent_path().string();
}

std::vector<std::string> probe_candidates() {
  const std::string dir = own_binary_directory();
  if (dir.empty()) return {};
  return {dir + "/../libexec/sluice/" + kProbeName, dir + "/" + kProbeName};
}

// "auto" found no probe: say so once per process, with where it looked.
void warn_reading_in_process() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::string places;
    for (const std::string& candidate : probe_candidates()) places += " " + candidate;
    log::warning(std::string("checkpoint.isolated_reads is auto and no ") + kProbeName + " was found (looked at" +
                 places + "; set " + kProbeEnvironmentVariable +
                 "): checkpoints are read in this process, where a crafted file that crashes libhdf5 kills it");
  });
}

// Starts the probe on `file` with its report on a pipe; returns its pid and the pipe's read end.
pid_t spawn_probe(const std::string& probe, const std::string& file, int& report_fd) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    throw Error(ErrorCode::kIo, file + ": cannot create a pipe for the checkpoint probe: " + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], kReportFd);  // dup2 clears close-on-exec on the copy
  // None of the host's other descriptors (MPI's sockets and shared memory, the solver's files) goes along.
  posix_spawn_file_actions_addclosefrom_np(&actions, kReportFd + 1);
  // Default dispositions and no blocked signal, whatever the host set: a crash must end the probe by its signal.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t all;
  sigset_t none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  const std::string fd_text = std::to_string(kReportFd);
  std::vector<char*> argv = {const_cast<char*>(probe.c_str()), const_cast<char*>("--report-fd"),
                             const_cast<char*>(fd_text.c_str()), const_cast<char*>("--"),
                             const_cast<char*>(file.c_str()), nullptr};
  pid_t child = -1;
  const int failed = posix_spawn(&child, probe.c_str(), &actions, &attributes, argv.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (failed != 0) {
    close(fds[0]);
    throw Error(ErrorCode::kIo, file + ": cannot start the checkpoint probe '" + probe + "': " + std::strerror(failed));
  }
  report_fd = fds[0];
  return child;
}

}  // namespace

std::string find_probe() {
  if (const char* named = std::getenv(kProbeEnvironmentVariable); named != nullptr && *named != '\0') {
    // Absolute, so that a relative setting (a Bazel test's runfiles path) does not depend on the directory.
    std::error_code error;
    const std::filesystem::path absolute = std::filesystem::absolute(named, error);
    return error ? named : absolute.string();
  }
  for (const std::string& candidate : probe_candidates()) {
    if (is_executable_file(candidate)) return std::filesystem::path(candidate).lexically_normal().string();
  }
  return "";
}

double probe_timeout_seconds(const std::string& file) {
  const double base = comm::wait_settings().timeout_seconds > 0 ? comm::wait_settings().timeout_seconds
                                                                : comm::kStartupTimeoutSeconds;
  std::error_code error;
  const auto bytes = std::filesystem::file_size(file, error);
  return base + (error ? 0.0 : static_cast<double>(bytes) / kProbeBytesPerSecond);
}

void probe_checkpoint(const std::string& file, IsolatedReads mode) {
  if (mode == IsolatedReads::kNever) return;
  const std::string probe = find_probe();
  if (probe.empty()) {
    if (mode == IsolatedReads::kAuto) return warn_reading_in_process();
    std::string places;
    for (const std::string& candidate : probe_candidates()) places += " " + candidate;
    throw Error(ErrorCode::kConfig, file + ": checkpoint.isolated_reads is always but the checkpoint probe " +
                                        kProbeName + " was not found (looked at" + places + "; set " +
                                        kProbeEnvironmentVariable + " to its path, or install it there)");
  }
  int report_fd = -1;
  const pid_t child = spawn_probe(probe, file, report_fd);
  await_report(child, report_fd, file, probe_timeout_seconds(file),
               "the checkpoint probe's limit: comm.timeout (or " + std::to_string(static_cast<int>(comm::kStartupTimeoutSeconds)) +
                   " s when it is 0) + 1 s per 8 MiB");
}

void probe_checkpoint(MPI_Comm comm, const std::string& file, IsolatedReads mode) {
  if (mode == IsolatedReads::kNever) return;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // The other ranks wait for rank 0's probe: its limit on top of the usual one.
  const double step = comm::wait_settings().timeout_seconds;
  const comm::Deadline deadline =
      step > 0 ? comm::Deadline::after(step + probe_timeout_seconds(file)) : comm::Deadline::none();
  comm::agree_or_throw(comm, "probing the checkpoint in a separate process", comm::capture_failure([&] {
                         if (rank == 0) probe_checkpoint(file, mode);
                       }),
                       deadline);
}

}  // namespace sluice::checkpoint
