// Runs a product's blocks (kernels/cpu/gemm_split.h) on a team of threads: the one place the CPU backend starts
// threads of its own. OpenMP, because oneDNN runs on OpenMP already: one runtime, one pool of workers, and oneDNN
// called inside a worker sees a nested region and stays on that thread.
#pragma once

#include <cstdint>
#include <functional>

namespace sluice::kernels {

// Calls block(j) for j in [0, count) on min(threads, count) threads (the caller's thread is one of them), each
// block exactly once, and returns when all have finished. threads <= 1 runs them in order on the caller's thread.
// An exception thrown by a block is rethrown here (the first one, by block index) after every block has run.
// Called from inside the host's own OpenMP parallel region, the blocks run on the caller's thread, whatever the
// host's nesting settings.
void run_blocks(int64_t count, int threads, const std::function<void(int64_t)>& block);

// Work per call below this many multiply-adds (over all samples) stays on the calling thread: waking a team, and its
// threads spinning idle after every small region (GOMP's default wait policy), cost more than they save, and with
// more ranks than cores the spinning takes the other ranks' cores. Never changes a bit: the field ops compute each
// sample the same way on any thread.
constexpr double kMinWorkToSpread = double(int64_t{1} << 21);

// The threads for `samples` samples of `work_per_sample` multiply-adds each: `team`, or 1 below the threshold
// (kMinWorkToSpread, or what a test set through SpreadThresholdForTests).
int threads_for(int team, int64_t samples, double work_per_sample);

// Lowers the threshold while it lives, so a test can run small shapes on a real team and check that the thread count
// changes no bit. Not for product code.
class SpreadThresholdForTests {
 public:
  explicit SpreadThresholdForTests(double threshold);
  ~SpreadThresholdForTests();
  SpreadThresholdForTests(const SpreadThresholdForTests&) = delete;
  SpreadThresholdForTests& operator=(const SpreadThresholdForTests&) = delete;

 private:
  double previous_;
};

}  // namespace sluice::kernels
