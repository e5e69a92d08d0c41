#include "tools/sluice/isolated_run.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "core/common/child_report.h"
#include "core/common/error.h"

namespace sluice::tools {

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
    const std::string report = run_and_report(work);
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    send_report(fds[1], report);
    _exit(0);  // no atexit handlers or static destructors of the parent's state (MPI, HDF5) run in the child
  }
  close(fds[1]);
  await_report(child, fds[0], subject, timeout_seconds, "--timeout");
}

}  // namespace sluice::tools
