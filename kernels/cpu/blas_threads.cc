#include "kernels/cpu/blas_threads.h"

#include <cblas.h>

#include <mutex>

namespace sluice::kernels {

namespace {

// Products now running in the process, and the setting they found (meaningful while `running` > 0).
struct Hold {
  std::mutex mutex;
  int running = 0;
  int kept = 1;
};

Hold& hold() {
  static Hold* const instance = new Hold;  // never destroyed: products may still run while statics are torn down
  return *instance;
}

}  // namespace

int blas_thread_count() {
  Hold& h = hold();
  const std::lock_guard<std::mutex> lock(h.mutex);
  return h.running > 0 ? h.kept : openblas_get_num_threads();
}

void set_blas_thread_count(int threads) {
  if (threads < 1) threads = 1;
  Hold& h = hold();
  const std::lock_guard<std::mutex> lock(h.mutex);
  if (h.running > 0) {
    h.kept = threads;
  } else {
    openblas_set_num_threads(threads);
  }
}

BlasHeldAtOneThread::BlasHeldAtOneThread() {
  Hold& h = hold();
  const std::lock_guard<std::mutex> lock(h.mutex);
  if (h.running++ == 0) {
    h.kept = openblas_get_num_threads();
    if (h.kept != 1) openblas_set_num_threads(1);
  }
  team_threads_ = h.kept;
}

BlasHeldAtOneThread::~BlasHeldAtOneThread() {
  Hold& h = hold();
  const std::lock_guard<std::mutex> lock(h.mutex);
  // Also where the kept setting is 1: a setting the host made behind Sluice's back meanwhile is replaced.
  if (--h.running == 0) openblas_set_num_threads(h.kept);
}

}  // namespace sluice::kernels
