// One channel's kept Fourier modes (kernels/spectral_geometry.h) and back, as successive 1-D FFTW transforms: the
// real transform along the last dimension first, then, of what is kept, the complex transform along each earlier
// dimension in turn (and the inverse in the opposite order). Transforming only the kept lines of each dimension
// gives what the full N-D transform restricted to the kept block gives, with less work; and each line is one plan
// run on one thread, so a channel's bits depend on its length and values alone.
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

#include "kernels/cpu/fftw_plans.h"
#include "kernels/spectral_geometry.h"

namespace sluice::kernels {

// The per-thread buffers of SpectralLines' transforms.
class SpectralLines {
 public:
  explicit SpectralLines(const SpectralGeometry& geometry);

  // kept[0, kept_modes) = the kept block of the unnormalized real FFT of `field` (points() reals).
  void forward(const float* field, std::complex<float>* kept);
  // field = scale · the real inverse FFT (unnormalized) of the half spectrum that is `kept` on the kept block and
  // zero elsewhere; in the last dimension the imaginary parts of mode 0 and of mode n/2 (even n) are not read, as a
  // real inverse FFT (FFTW's and PyTorch's irfftn) treats them.
  void inverse(const std::complex<float>* kept, float scale, float* field);

 private:
  const SpectralGeometry& g_;
  LineScratch scratch_;
  std::vector<std::complex<float>> a_, b_;  // the partly transformed channel, ping-pong
};

}  // namespace sluice::kernels
