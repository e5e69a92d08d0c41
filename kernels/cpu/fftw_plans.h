// FFTW 3 (single precision) for the CPU backend's spectral convolution: plans of the 1-D transforms of one length,
// made once per length and kept for the life of the process, and aligned scratch lines to run them on.
// Plans are made with FFTW_ESTIMATE only (FFTW_MEASURE picks a plan by timing it, so two ranks or two runs could
// run different plans and round differently) and without FFTW's threads, so a plan's result depends on its length
// alone. FFTW's planner is not thread-safe: plan creation is serialized here (by this file's mutex; a host program
// that plans with FFTW on other threads at the same time is not covered). Running a plan through the new-array
// functions (fftwf_execute_dft_r2c etc.) is thread-safe, on arrays aligned as the planning arrays were: LineScratch's.
// Not covered either: wisdom a host program imports or makes with FFTW_MEASURE for the same length before our first
// plan, which FFTW's planner would reuse; and CPUs with other SIMD extensions, where FFTW picks other codelets (as
// oneDNN picks other kernels), so ranks of one run should run on one kind of CPU.
#pragma once

#include <fftw3.h>

#include <cstdint>

namespace sluice::kernels {

// The four 1-D transforms of length n, each out of place (input and output distinct arrays), unnormalized:
// r2c (n reals -> n/2 + 1 complex), c2r (n/2 + 1 complex -> n reals; overwrites its input), forward and backward
// c2c (n complex -> n complex; forward uses e^{-2πi jk/n}).
struct LinePlans {
  fftwf_plan r2c = nullptr;
  fftwf_plan c2r = nullptr;
  fftwf_plan forward = nullptr;
  fftwf_plan backward = nullptr;
};

// The cached plans for length n >= 1 (made on first use; never destroyed). Throws Error(kInternal) when FFTW cannot
// make one.
const LinePlans& line_plans(int64_t n);

// Scratch lines for one thread: a real line and two complex lines of up to `length` elements, from fftwf_malloc so
// that they are aligned as the planning arrays were.
class LineScratch {
 public:
  explicit LineScratch(int64_t length);
  ~LineScratch();
  LineScratch(const LineScratch&) = delete;
  LineScratch& operator=(const LineScratch&) = delete;

  float* real() { return real_; }
  fftwf_complex* in() { return in_; }
  fftwf_complex* out() { return out_; }

 private:
  float* real_;
  fftwf_complex* in_;
  fftwf_complex* out_;
};

}  // namespace sluice::kernels
