// CpuBackend's spectral convolution: each sample's channels through FFTW (kernels/cpu/spectral_lines.h), the
// complex channel mixing as plain loops in a fixed order, samples shared out over the rank's threads. The weight
// gradient is each sample's contribution added in sample order, element by element, so its bits depend on neither
// the thread count nor how the samples are split into micro-batches.
//
// With X = the kept modes of rfftn(x), W the weight and N = Π extents:
//   forward        y  = irfftn(Z) / N,           Z[o] = Σ_i X[i] · W[i][o]
//   backward data  dx = irfftn(G) / N,           G[i] = Σ_o D[o] · conj(W[i][o]),   D = kept modes of rfftn(dy)
//   weight grad    dW[i][o] += conj(X[i]) · c · D[o] / N
// where c is 1 for the last dimension's modes 0 and n/2 (even n) and 2 for its others: a real inverse FFT counts
// each of those modes once for itself and once for its conjugate twin in the half spectrum it does not store, so
// the adjoint of y = irfftn(Z) is Z̄ = c · rfftn(dy) / N. In dx the c cancels: rfftn's adjoint, restricted to the
// half spectrum, is the real inverse FFT divided by c, which gives back irfftn(G) / N.
#include <algorithm>
#include <complex>
#include <functional>
#include <vector>

#include "kernels/cpu/blas_threads.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/parallel_blocks.h"
#include "kernels/cpu/spectral_lines.h"

namespace sluice::kernels {
namespace {

using Complex = std::complex<float>;

// Roughly the flops of one sample: a transform per channel each way, and the mixing.
double work_of(const SpectralGeometry& g) {
  const double n = static_cast<double>(g.points());
  double log_n = 1.0;
  for (int64_t e = g.points(); e > 1; e /= 2) log_n += 1.0;
  return 5.0 * n * log_n * static_cast<double>(g.in_channels + g.out_channels) +
         8.0 * static_cast<double>(g.in_channels * g.out_channels * g.kept_modes());
}

// The complex weight of (i, o) at kept mode 0: kept_modes() pairs (real, imaginary).
const float* weight_of(const SpectralGeometry& g, const float* weight, int64_t i, int64_t o) {
  return weight + (i * g.out_channels + o) * g.kept_modes() * 2;
}

// to[k] += from[k] · w[k], or · conj(w[k]); written out so the order of the operations is the formula's.
void multiply_add(const Complex* from, const float* w, bool conjugate, int64_t count, Complex* to) {
  const float sign = conjugate ? -1.0f : 1.0f;
  for (int64_t k = 0; k < count; ++k) {
    const float a = from[k].real(), b = from[k].imag(), c = w[2 * k], d = sign * w[2 * k + 1];
    to[k] = Complex(to[k].real() + (a * c - b * d), to[k].imag() + (a * d + b * c));
  }
}

// What one thread needs for its samples: the transforms' buffers and the spectra, allocated once per chunk of
// samples rather than once per sample (allocation is most of a small sample's cost).
struct Workspace {
  explicit Workspace(const SpectralGeometry& g, int64_t channels)
      : lines(g), spectra(static_cast<size_t>(channels * g.kept_modes())), mixed(static_cast<size_t>(g.kept_modes())) {}
  SpectralLines lines;
  std::vector<Complex> spectra;
  std::vector<Complex> mixed;
};

// Calls sample(n, workspace) for every n in [0, samples), the samples cut into one contiguous chunk per thread, each
// chunk with its own workspace. A sample's bits do not depend on its chunk.
void for_each_sample(const SpectralGeometry& g, int64_t samples, int64_t channels,
                     const std::function<void(int64_t, Workspace&)>& sample) {
  const BlasHeldAtOneThread team;
  const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(samples, threads_for(team.team_threads(), samples,
                                                                                    work_of(g))));
  run_blocks(chunks, static_cast<int>(chunks), [&](int64_t c) {
    Workspace workspace(g, channels);
    for (int64_t n = samples * c / chunks; n < samples * (c + 1) / chunks; ++n) sample(n, workspace);
  });
}

// One sample: `from_channels` channels of `from` (points() each) transformed, mixed by the weight (W, or conj(W)
// transposed for the backward) into `to_channels` channels of `to`.
void mix_sample(const SpectralGeometry& g, const float* from, const float* weight, bool backward, Workspace& work,
                float* to) {
  const int64_t kept = g.kept_modes(), points = g.points();
  const int64_t from_channels = backward ? g.out_channels : g.in_channels;
  const int64_t to_channels = backward ? g.in_channels : g.out_channels;
  for (int64_t c = 0; c < from_channels; ++c) work.lines.forward(from + c * points, work.spectra.data() + c * kept);
  const float scale = static_cast<float>(1.0 / static_cast<double>(points));
  for (int64_t t = 0; t < to_channels; ++t) {
    std::fill(work.mixed.begin(), work.mixed.end(), Complex(0.0f, 0.0f));
    for (int64_t f = 0; f < from_channels; ++f) {
      const float* w = backward ? weight_of(g, weight, t, f) : weight_of(g, weight, f, t);
      multiply_add(work.spectra.data() + f * kept, w, backward, kept, work.mixed.data());
    }
    work.lines.inverse(work.mixed.data(), scale, to + t * points);
  }
}

void mix(const SpectralGeometry& g, const Tensor& from, const float* weight, bool backward, Tensor& to) {
  const int64_t from_width = from.cols(), to_width = to.cols();
  for_each_sample(g, from.rows(), std::max(g.in_channels, g.out_channels), [&](int64_t n, Workspace& work) {
    mix_sample(g, from.data() + n * from_width, weight, backward, work, to.data() + n * to_width);
  });
}

// c / N for each kept mode (c: the last dimension's count of twins, above).
std::vector<float> twin_scales(const SpectralGeometry& g) {
  const int64_t n_last = g.extents.back(), m_last = g.modes.back();
  std::vector<float> scales(static_cast<size_t>(g.kept_modes()));
  for (int64_t k = 0; k < g.kept_modes(); ++k) {
    const int64_t j = k % m_last;
    const bool single = j == 0 || (n_last % 2 == 0 && j == n_last / 2);
    scales[static_cast<size_t>(k)] = static_cast<float>((single ? 1.0 : 2.0) / static_cast<double>(g.points()));
  }
  return scales;
}

}  // namespace

void CpuBackend::spectral_conv_forward_impl(const SpectralGeometry& geometry, const Tensor& x, const Tensor& weight,
                                            Tensor& y) {
  mix(geometry, x, weight.data(), false, y);
}

void CpuBackend::spectral_conv_backward_data_impl(const SpectralGeometry& geometry, const Tensor& dy,
                                                  const Tensor& weight, Tensor& dx) {
  mix(geometry, dy, weight.data(), true, dx);
}

void CpuBackend::spectral_conv_accumulate_weight_grad_impl(const SpectralGeometry& geometry, const Tensor& x,
                                                           const Tensor& dy, Tensor& weight_grad) {
  const SpectralGeometry& g = geometry;
  const int64_t samples = x.rows(), kept = g.kept_modes(), points = g.points();
  const int64_t channels = g.in_channels + g.out_channels;
  if (samples == 0) return;
  // Each sample's kept modes: its input's channels X, then its output gradient's D scaled by c / N.
  std::vector<Complex> spectra(static_cast<size_t>(samples * channels * kept));
  const std::vector<float> scales = twin_scales(g);
  for_each_sample(g, samples, 0, [&](int64_t n, Workspace& work) {
    Complex* s = spectra.data() + n * channels * kept;
    for (int64_t c = 0; c < g.in_channels; ++c) {
      work.lines.forward(x.data() + n * x.cols() + c * points, s + c * kept);
    }
    for (int64_t c = 0; c < g.out_channels; ++c) {
      Complex* d = s + (g.in_channels + c) * kept;
      work.lines.forward(dy.data() + n * dy.cols() + c * points, d);
      for (int64_t k = 0; k < kept; ++k) d[k] *= scales[static_cast<size_t>(k)];
    }
  });
  const BlasHeldAtOneThread team;
  // dW[i][o][k] += conj(X[i][k]) · D[o][k], sample after sample: one input channel's rows per block.
  run_blocks(g.in_channels, threads_for(team.team_threads(), g.in_channels, 8.0 * samples * g.out_channels * kept),
             [&](int64_t i) {
               for (int64_t n = 0; n < samples; ++n) {
                 const Complex* X = spectra.data() + (n * channels + i) * kept;
                 for (int64_t o = 0; o < g.out_channels; ++o) {
                   const Complex* D = spectra.data() + (n * channels + g.in_channels + o) * kept;
                   float* w = weight_grad.data() + (i * g.out_channels + o) * kept * 2;
                   for (int64_t k = 0; k < kept; ++k) {
                     const float a = X[k].real(), b = -X[k].imag(), c = D[k].real(), d = D[k].imag();
                     w[2 * k] += a * c - b * d;
                     w[2 * k + 1] += a * d + b * c;
                   }
                 }
               }
             });
}

}  // namespace sluice::kernels
