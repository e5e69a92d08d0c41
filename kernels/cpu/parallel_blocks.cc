#include "kernels/cpu/parallel_blocks.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <vector>

namespace sluice::kernels {

void run_blocks(int64_t count, int threads, const std::function<void(int64_t)>& block) {
  if (count <= 0) return;
  const int team = static_cast<int>(std::min<int64_t>(std::max(threads, 1), count));
  // An exception must not leave an OpenMP region: each block's is kept and the first rethrown afterwards. A team
  // of one runs the same loop inline on the caller's thread, in order.
  std::vector<std::exception_ptr> failures(static_cast<size_t>(count));
  // Inside the host's own parallel region the blocks stay on the calling thread, whatever the host's nesting
  // settings: its threads times ours would oversubscribe the cores.
  const bool spread = team > 1 && !omp_in_parallel();
#pragma omp parallel for num_threads(team) schedule(static) if (spread)
  for (int64_t j = 0; j < count; ++j) {
    try {
      block(j);
    } catch (...) {
      failures[static_cast<size_t>(j)] = std::current_exception();
    }
  }
  for (const std::exception_ptr& failure : failures)
    if (failure) std::rethrow_exception(failure);
}

namespace {
std::atomic<double> g_min_work_to_spread{kMinWorkToSpread};
}  // namespace

int threads_for(int team, int64_t samples, double work_per_sample) {
  return static_cast<double>(samples) * work_per_sample >= g_min_work_to_spread.load() ? team : 1;
}

SpreadThresholdForTests::SpreadThresholdForTests(double threshold) : previous_(g_min_work_to_spread.exchange(threshold)) {}
SpreadThresholdForTests::~SpreadThresholdForTests() { g_min_work_to_spread.store(previous_); }

}  // namespace sluice::kernels
