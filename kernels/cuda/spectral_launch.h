// Host-callable launchers for spectral.cu: the index maps and the channel mixing around the cuFFT transforms of the
// spectral convolution (cuda_spectral_ops.cc). Complex values are interleaved float pairs (cufftComplex's layout).
// A sample's C channels pass through three layouts:
//   lines  [C][P][half]    the real FFT along the last dimension (P = Π of the other extents, half = n/2 + 1)
//   planes [C][m][P]       its first m (= the last dimension's modes) positions, moved outermost, so the complex
//                          FFT over the other dimensions is a contiguous batch of C · m transforms
//   kept   [C][kept]       the kept block in the layer's order (kernels/spectral_geometry.h)
// Every kernel writes each output element once from a fixed sequence of inputs (no atomics), so repeated runs give
// the same bits. Each launcher checks its launch and throws Error(kCuda) naming the kernel.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace sluice::kernels::cuda_launch {

// A SpectralGeometry as the kernels read it (cuda_spectral_ops.cc fills it).
struct SpectralShape {
  int dims = 1;                     // 1 to 3 spatial dimensions
  int64_t extent[3] = {1, 1, 1};    // n1..nk, unused trailing entries 1
  int64_t modes[3] = {1, 1, 1};     // m1..mk
  int64_t lead_points = 1;          // P = Π extents of the non-last dimensions
  int64_t half = 1;                 // n_last / 2 + 1
  int64_t kept = 1;                 // kept_modes()
  int64_t points = 1;               // Π extents
  int64_t n_last = 1;               // extent[dims − 1] (plain fields: device code reads them)
  int64_t m_last = 1;               // modes[dims − 1]
};

// lines -> planes for `channels` channels (all samples' channels at once).
void lines_to_planes(const SpectralShape& shape, const float* lines, float* planes, int64_t channels,
                     cudaStream_t stream);
// planes -> lines, every other position of the half spectrum zero, and the imaginary parts of the last dimension's
// mode 0 and mode n/2 (even n) set to zero: a real inverse FFT does not read them (FFTW's c2r, as the CPU path
// uses it), and zeroing them makes cuFFT's C2R compute the same function whatever its algorithm.
void planes_to_lines(const SpectralShape& shape, const float* planes, float* lines, int64_t channels,
                     cudaStream_t stream);
// planes -> kept, and kept -> planes (every position that is not a kept mode zero).
void gather_kept(const SpectralShape& shape, const float* planes, float* kept, int64_t channels, cudaStream_t stream);
void scatter_kept(const SpectralShape& shape, const float* kept, float* planes, int64_t channels,
                  cudaStream_t stream);

// The per-mode channel mixing of `samples` samples, the CPU's formula and order (kernels/cpu/cpu_spectral.cc):
// forward  to[n][o][k] = Σ_i from[n][i][k] · W[i][o][k]
// backward to[n][i][k] = Σ_o from[n][o][k] · conj(W[i][o][k])
// the sum over the channels in ascending order, starting from zero. weight is [in][out][kept][2].
void spectral_mix(const SpectralShape& shape, int64_t in_channels, int64_t out_channels, const float* from,
                  const float* weight, bool backward, float* to, int64_t samples, cudaStream_t stream);
// weight_grad[i][o][k] += conj(X[n][i][k]) · c_k · D[n][o][k] / N for n = 0, 1, .. in order, added into the gradient
// one sample at a time as the CPU does (c_k: 1 for the last dimension's modes 0 and n/2, else 2).
void spectral_weight_grad(const SpectralShape& shape, int64_t in_channels, int64_t out_channels, const float* x_kept,
                          const float* dy_kept, float* weight_grad, int64_t samples, cudaStream_t stream);

}  // namespace sluice::kernels::cuda_launch
