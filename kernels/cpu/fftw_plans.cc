#include "kernels/cpu/fftw_plans.h"

#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include "core/common/error.h"

namespace sluice::kernels {
namespace {

// The planning arrays are freed once the plans exist; a plan keeps only their alignment, which fftwf_malloc gives
// every array it returns (LineScratch's included).
LinePlans make_plans(int64_t n) {
  const int length = static_cast<int>(n);
  float* real = fftwf_alloc_real(static_cast<size_t>(n + 2));
  fftwf_complex* a = fftwf_alloc_complex(static_cast<size_t>(n + 1));
  fftwf_complex* b = fftwf_alloc_complex(static_cast<size_t>(n + 1));
  LinePlans plans;
  if (real != nullptr && a != nullptr && b != nullptr) {
    plans.r2c = fftwf_plan_dft_r2c_1d(length, real, a, FFTW_ESTIMATE);
    plans.c2r = fftwf_plan_dft_c2r_1d(length, a, real, FFTW_ESTIMATE);
    plans.forward = fftwf_plan_dft_1d(length, a, b, FFTW_FORWARD, FFTW_ESTIMATE);
    plans.backward = fftwf_plan_dft_1d(length, a, b, FFTW_BACKWARD, FFTW_ESTIMATE);
  }
  fftwf_free(real);
  fftwf_free(a);
  fftwf_free(b);
  if (plans.r2c == nullptr || plans.c2r == nullptr || plans.forward == nullptr || plans.backward == nullptr) {
    throw Error(ErrorCode::kInternal, "FFTW could not plan the transforms of length " + std::to_string(n));
  }
  return plans;
}

struct PlanCache {
  std::mutex mutex;
  std::map<int64_t, std::unique_ptr<LinePlans>> plans;  // by length; the entries never move or go
};

}  // namespace

const LinePlans& line_plans(int64_t n) {
  // Never destroyed: the plans stay reachable until exit (and a thread still running at exit still finds them).
  static PlanCache* const cache = new PlanCache;
  const std::lock_guard<std::mutex> lock(cache->mutex);
  std::unique_ptr<LinePlans>& entry = cache->plans[n];
  if (!entry) entry = std::make_unique<LinePlans>(make_plans(n));
  return *entry;
}

LineScratch::LineScratch(int64_t length)
    : real_(fftwf_alloc_real(static_cast<size_t>(length + 2))),
      in_(fftwf_alloc_complex(static_cast<size_t>(length + 1))),
      out_(fftwf_alloc_complex(static_cast<size_t>(length + 1))) {
  if (real_ == nullptr || in_ == nullptr || out_ == nullptr) {
    fftwf_free(real_);
    fftwf_free(in_);
    fftwf_free(out_);
    throw std::bad_alloc();
  }
}

LineScratch::~LineScratch() {
  fftwf_free(real_);
  fftwf_free(in_);
  fftwf_free(out_);
}

}  // namespace sluice::kernels
