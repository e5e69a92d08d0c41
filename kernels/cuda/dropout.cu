// Inverted dropout from the counter-based RNG: the mask is a pure function of (stream, element), identical to
// the CPU's (kernels/cpu/cpu_dropout.cc), so it is never stored and backward regenerates it.
#include "kernels/cuda/cuda_launch.h"
#include "kernels/cuda/launch_config.cuh"
#include "kernels/cuda/philox_device.cuh"

namespace sluice::kernels::cuda_launch {
namespace {

__global__ void dropout_kernel(const float* in, float p, RngStream rng, float* out, int64_t n) {
  const float keep_scale = 1.0f / (1.0f - p);
  SLUICE_GRID_STRIDE(block, (n + 3) / 4) {
    float u[4];
    uniform_block(rng, static_cast<uint64_t>(block), u);
    for (int w = 0; w < 4; ++w) {
      const int64_t i = block * 4 + w;
      if (i < n) out[i] = u[w] >= p ? in[i] * keep_scale : 0.0f;
    }
  }
}

}  // namespace

void dropout(const float* in, float p, const RngStream& rng, float* out, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  dropout_kernel<<<blocks_for((n + 3) / 4), kThreads, 0, stream>>>(in, p, rng, out, n);
  check_launch("dropout_kernel");
}

}  // namespace sluice::kernels::cuda_launch
