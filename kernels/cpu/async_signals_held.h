// Holds back asynchronous signals from the calling thread for one scope, for library code that must not be
// interrupted by a signal handler.
//
// Why: oneDNN's generated f32 GEMM kernels (Debian 12 ships oneDNN 2.6; the AVX2 and AVX-512 `gemm:jit` kernels
// behind dnnl_sgemm and the gemm-based primitives) point the stack pointer into a workspace they allocated on the
// heap while they run. A signal delivered to that thread then has its frame (registers, the AVX-512 state, the
// handler's own frame) written by the kernel below that pointer, over the heap chunk in front of the workspace, and
// glibc aborts at a later malloc or free ("corrupted size vs. prev_size"). Any handler does it, even one that only
// sets a flag, as Sluice's preemption handler does, and so does a host's profiler. Fixed upstream by oneDNN PR 4855
// (2026), after every version Debian packages. tests/kernels/routed_gemm_signal_test shows it.
//
// A held signal stays pending: another thread that does not hold it takes it at once, or this thread takes it when
// the scope ends, so a preemption request is delayed by at most one product. Signals the CPU raises for the
// instruction itself (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS) are never held: holding those is undefined.
#pragma once

#include <signal.h>

namespace sluice::kernels {

class AsyncSignalsHeld {
 public:
  AsyncSignalsHeld();
  ~AsyncSignalsHeld();
  AsyncSignalsHeld(const AsyncSignalsHeld&) = delete;
  AsyncSignalsHeld& operator=(const AsyncSignalsHeld&) = delete;

 private:
  sigset_t previous_;
  bool held_ = false;
};

}  // namespace sluice::kernels
