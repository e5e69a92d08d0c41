// cuFFT plans of the spectral convolution (cuda_spectral_ops.cc), made on first use and cached by shape for the
// backend's life, all bound to the backend's compute stream. A plan covers ONE sample's channels (the batch is
// channels × lines of a sample, never samples), so a sample's transforms, hence its bits, do not depend on how many
// samples share its micro-batch: the CPU's rule (kernels/cpu/cpu_spectral.cc), kept on the GPU.
#pragma once

#include <cuda_runtime_api.h>
#include <cufft.h>

#include <map>
#include <tuple>
#include <vector>

namespace sluice::kernels {

// Throws Error(kCuda) "<what> failed: cuFFT status <n> (<name>)" unless status is CUFFT_SUCCESS.
void check_cufft(cufftResult status, const char* what);

class CufftPlans {
 public:
  explicit CufftPlans(cudaStream_t stream) : stream_(stream) {}
  ~CufftPlans();  // destroys every plan (errors ignored: a destructor cannot throw)
  CufftPlans(const CufftPlans&) = delete;
  CufftPlans& operator=(const CufftPlans&) = delete;

  // A plan of `batch` contiguous transforms of extents `n` (rank = n.size(), 1 or 2; the basic data layout:
  // transform b starts at b · Π n for real or C2C data, b · (Π n with the last as n/2 + 1) for the complex side of
  // R2C/C2R). Throws Error(kCuda) if cuFFT refuses, Error(kInvalidArgument) for sizes beyond cuFFT's int range.
  cufftHandle get(cufftType type, const std::vector<long long>& n, long long batch);

 private:
  using Key = std::tuple<int, std::vector<long long>, long long>;
  cudaStream_t stream_;
  std::map<Key, cufftHandle> plans_;
};

}  // namespace sluice::kernels
