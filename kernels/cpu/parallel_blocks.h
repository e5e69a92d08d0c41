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

}  // namespace sluice::kernels
