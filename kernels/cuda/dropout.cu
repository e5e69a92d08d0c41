// Inverted dropout from the counter-based RNG: the mask is a pure function of (stream, element), identical to
// the CPU's (kernels/cpu/cpu_dropout.cc), so it is never stored and backward regenerates it.
#include "kernels/cuda/cuda_launch.h"
#include "kernels/cuda/launch_config.cuh"
#include "kernels/cuda/philox_device.cuh"

namespace sluice::kernels::cuda_launch {
namespace {

// One thread per Philox block of 4 features of one row (sample): row r draws from sample rng.first_sample + r, as
// uniform_floats does for a per-sample stream (rng.row_width features a row; a flat stream is one long row).
__global__ void dropout_kernel(const float* in, float p, RngStream rng, float* out, int64_t n, int64_t width,
                               int64_t blocks_per_row) {
  const float keep_scale = 1.0f / (1.0f - p);
  SLUICE_GRID_STRIDE(id, (n / width) * blocks_per_row) {
    const int64_t row = id / blocks_per_row;
    const int64_t block = id % blocks_per_row;
    const uint64_t sample = rng.row_width > 0 ? rng.first_sample + static_cast<uint64_t>(row) : rng.first_sample;
    float u[4];
    uniform_block(rng, sample, static_cast<uint64_t>(block), u);
    for (int w = 0; w < 4; ++w) {
      const int64_t f = block * 4 + w;
      const int64_t i = row * width + f;
      if (f < width) out[i] = u[w] >= p ? in[i] * keep_scale : 0.0f;
    }
  }
}

}  // namespace

void dropout(const float* in, float p, const RngStream& rng, float* out, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  // A per-sample stream's rows are row_width long (Backend checks that it divides n); a flat stream is one row.
  const int64_t width = rng.row_width > 0 ? static_cast<int64_t>(rng.row_width) : n;
  const int64_t blocks_per_row = (width + 3) / 4;
  dropout_kernel<<<blocks_for((n / width) * blocks_per_row), kThreads, 0, stream>>>(in, p, rng, out, n, width,
                                                                                    blocks_per_row);
  check_launch("dropout_kernel");
}

}  // namespace sluice::kernels::cuda_launch
