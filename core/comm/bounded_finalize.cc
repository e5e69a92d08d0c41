#include "core/comm/bounded_finalize.h"

#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

namespace sluice::comm {

void run_bounded_or_exit(const std::function<void()>& action, double timeout_s, int exit_status,
                         const std::string& who, const std::string& what) {
  if (!(timeout_s > 0)) {
    action();
    return;
  }
  std::mutex mutex;
  std::condition_variable returned;
  bool done = false;
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(mutex);
    if (returned.wait_for(lock, std::chrono::duration<double>(timeout_s), [&] { return done; })) return;
    std::fprintf(stderr, "%s: %s did not return within %g s; exiting with status %d (everything was saved before it)\n",
                 who.c_str(), what.c_str(), timeout_s, exit_status);
    std::fflush(stderr);
    _exit(exit_status);
  });
  action();
  {
    const std::lock_guard<std::mutex> lock(mutex);
    done = true;
  }
  returned.notify_one();
  watchdog.join();
}

void finalize_bounded(double timeout_s, int exit_status, const std::string& who) {
  run_bounded_or_exit([] { MPI_Finalize(); }, timeout_s, exit_status, who, "MPI_Finalize");
}

}  // namespace sluice::comm
