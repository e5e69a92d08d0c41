// oneDNN on one thread per call: what keeps a product's or a convolution's bits free of the thread count (a rank's
// threads share the work out in blocks fixed by the shape instead; kernels/cpu/parallel_blocks.h).
#pragma once

#include <omp.h>

namespace sluice::kernels {

// Sets the calling thread's OpenMP thread count (what oneDNN's OpenMP runtime reads) for one scope, where it is not
// that already: with Intel's OpenMP runtime, setting the count outside a parallel region shrinks the host's thread
// team at once, so a host already at one thread is left alone.
class OmpThreadsScope {
 public:
  explicit OmpThreadsScope(int threads) : previous_(omp_get_max_threads()) {
    if (previous_ != threads) omp_set_num_threads(threads);
  }
  ~OmpThreadsScope() {
    if (omp_get_max_threads() != previous_) omp_set_num_threads(previous_);
  }
  OmpThreadsScope(const OmpThreadsScope&) = delete;
  OmpThreadsScope& operator=(const OmpThreadsScope&) = delete;

 private:
  int previous_;
};

// Whether this oneDNN runs on OpenMP: only then is its thread count ours to hold at one (OmpThreadsScope).
bool onednn_runtime_is_openmp();

}  // namespace sluice::kernels
