// The BLAS library's thread count (OpenBLAS), process-wide: the one setting the host program and Sluice share for
// "how many threads a rank's kernels use" (config key cpu_threads, core/runtime/cpu_threads.h). The CPU backend
// reads it as the size of its own team (kernels/cpu/parallel_blocks.h) and holds the library itself at one thread
// while products run, so the library's worker pool and the team never compete for the cores. Read and set only
// through here so the one place that knows the BLAS library is this file.
#pragma once

namespace sluice::kernels {

// The rank's thread count: the library's setting, or, while products run, the setting they will put back.
int blas_thread_count();
// threads >= 1. While products run, sets what they put back (the library stays at one thread until they end).
void set_blas_thread_count(int threads);

// Holds the library at one thread while at least one product runs anywhere in the process: the first product in
// keeps the setting it found, the last one out puts it back, so products on several host threads at once (two
// trainers, say) neither lose the setting nor let the library's pool run inside a team. The host's own BLAS calls
// made meanwhile run on one thread, and a setting the host makes meanwhile behind Sluice's back is replaced by the
// kept one when the last product ends. With an OpenMP build of OpenBLAS the library's count is the calling thread's
// OpenMP count, so that is what is held and set back; Debian's default (libopenblas0-pthread) is a pthreads build.
class BlasHeldAtOneThread {
 public:
  BlasHeldAtOneThread();
  ~BlasHeldAtOneThread();
  BlasHeldAtOneThread(const BlasHeldAtOneThread&) = delete;
  BlasHeldAtOneThread& operator=(const BlasHeldAtOneThread&) = delete;
  int team_threads() const { return team_threads_; }  // the kept setting: how many threads the product may use

 private:
  int team_threads_;
};

}  // namespace sluice::kernels
