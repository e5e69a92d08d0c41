// CudaBackend's spectral convolution (operands checked by Backend). The transforms are cuFFT's, done as the CPU
// does them (kernels/cpu/spectral_lines.h): a 1-D real FFT along the last dimension, then a complex FFT over the
// other dimensions of only the last dimension's kept positions, and the inverse in the opposite order; the channel
// mixing and the index maps between are spectral.cu's kernels, in the CPU's order of operations. The formulas,
// including the weight gradient's twin factor c / N, are kernels/cpu/cpu_spectral.cc's. Each cuFFT call covers one
// sample (kernels/cuda/cufft_plans.h), so a sample's bits depend on neither its batch nor the launch; agreement
// with the CPU is to rounding (cuFFT's and FFTW's algorithms differ).
#include <cufft.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_launch.h"
#include "kernels/cuda/cufft_plans.h"
#include "kernels/cuda/spectral_launch.h"

namespace sluice::kernels {
namespace {

using cuda_launch::SpectralShape;

SpectralShape shape_of(const SpectralGeometry& g) {
  SpectralShape s;
  s.dims = static_cast<int>(g.dims());
  for (size_t d = 0; d < g.dims(); ++d) {
    s.extent[d] = g.extents[d];
    s.modes[d] = g.modes[d];
  }
  s.lead_points = g.points() / g.extents.back();
  s.half = g.extents.back() / 2 + 1;
  s.kept = g.kept_modes();
  s.points = g.points();
  s.n_last = g.extents.back();
  s.m_last = g.modes.back();
  return s;
}

// The extents of the non-last dimensions: the complex transform's.
std::vector<long long> lead_extents(const SpectralGeometry& g) {
  return std::vector<long long>(g.extents.begin(), g.extents.end() - 1);
}

cufftComplex* complex_at(Tensor& buffer, int64_t offset) {
  return reinterpret_cast<cufftComplex*>(buffer.data()) + offset;
}

// The real side of the transforms works on a copy whose samples start 256 bytes apart at least: a sample's row in
// a field tensor may start at any float, and cuFFT is then handed the same alignment whether a sample is alone or
// in a batch (and never a pointer aligned to 4 bytes only).
int64_t aligned_stride(int64_t cols) { return (cols + 63) / 64 * 64; }

// dst rows of dst_stride floats <- src rows of src_stride floats, `cols` floats of each of `rows` rows.
void copy_rows(float* dst, int64_t dst_stride, const float* src, int64_t src_stride, int64_t cols, int64_t rows,
               cudaStream_t stream) {
  constexpr size_t kFloat = sizeof(float);
  check_cuda(cudaMemcpy2DAsync(dst, static_cast<size_t>(dst_stride) * kFloat, src,
                               static_cast<size_t>(src_stride) * kFloat, static_cast<size_t>(cols) * kFloat,
                               static_cast<size_t>(rows), cudaMemcpyDeviceToDevice, stream),
             "cudaMemcpy2DAsync (spectral_conv field rows)");
}

// One op's view of the backend: scratch from its stream-ordered pool, its plans, its stream.
struct SpectralRun {
  CudaBackend& backend;
  CufftPlans& plans;
  cudaStream_t stream;
  const SpectralGeometry& g;
  SpectralShape shape;

  Tensor complex_buffer(int64_t count) { return backend.empty(1, 2 * count); }

  // The complex FFT over the non-last dimensions of planes [samples][channels][m][P], per sample.
  void lead_transforms(Tensor& planes, int64_t samples, int64_t channels, int direction) {
    if (shape.dims == 1) return;
    const int64_t per_sample = channels * shape.m_last * shape.lead_points;
    const cufftHandle plan = plans.get(CUFFT_C2C, lead_extents(g), channels * shape.m_last);
    for (int64_t n = 0; n < samples; ++n) {
      cufftComplex* data = complex_at(planes, n * per_sample);
      check_cufft(cufftExecC2C(plan, data, data, direction), "cufftExecC2C (spectral_conv)");
    }
  }

  // The kept modes [samples][channels][kept] of each channel of `field` ([samples][channels · points]).
  Tensor kept_spectra(const Tensor& field, int64_t channels) {
    const int64_t samples = field.rows(), lines_per_sample = channels * shape.lead_points * shape.half;
    // A copy (aligned_stride), which also keeps the caller's field from cuFFT, which may use its input as scratch.
    const int64_t stride = aligned_stride(field.cols());
    Tensor real = backend.empty(samples, stride);
    copy_rows(real.data(), stride, field.data(), field.cols(), field.cols(), samples, stream);
    Tensor lines = complex_buffer(samples * lines_per_sample);
    const cufftHandle r2c = plans.get(CUFFT_R2C, {static_cast<long long>(shape.n_last)},
                                      channels * shape.lead_points);
    for (int64_t n = 0; n < samples; ++n) {
      check_cufft(cufftExecR2C(r2c, real.data() + n * stride, complex_at(lines, n * lines_per_sample)),
                  "cufftExecR2C (spectral_conv)");
    }
    Tensor planes = complex_buffer(samples * channels * shape.m_last * shape.lead_points);
    cuda_launch::lines_to_planes(shape, lines.data(), planes.data(), samples * channels, stream);
    lead_transforms(planes, samples, channels, CUFFT_FORWARD);
    Tensor kept = complex_buffer(samples * channels * shape.kept);
    cuda_launch::gather_kept(shape, planes.data(), kept.data(), samples * channels, stream);
    return kept;
  }

  // field [samples][channels · points] = the real inverse FFT of the half spectrum that is `kept` on the kept
  // block and zero elsewhere, divided by N.
  void field_from_kept(const Tensor& kept, int64_t channels, Tensor& field) {
    const int64_t samples = field.rows(), lines_per_sample = channels * shape.lead_points * shape.half;
    Tensor planes = complex_buffer(samples * channels * shape.m_last * shape.lead_points);
    cuda_launch::scatter_kept(shape, kept.data(), planes.data(), samples * channels, stream);
    lead_transforms(planes, samples, channels, CUFFT_INVERSE);
    Tensor lines = complex_buffer(samples * lines_per_sample);
    cuda_launch::planes_to_lines(shape, planes.data(), lines.data(), samples * channels, stream);
    const cufftHandle c2r = plans.get(CUFFT_C2R, {static_cast<long long>(shape.n_last)},
                                      channels * shape.lead_points);
    const int64_t stride = aligned_stride(field.cols());
    Tensor real = backend.empty(samples, stride);
    for (int64_t n = 0; n < samples; ++n) {
      check_cufft(cufftExecC2R(c2r, complex_at(lines, n * lines_per_sample), real.data() + n * stride),
                  "cufftExecC2R (spectral_conv)");
    }
    copy_rows(field.data(), field.cols(), real.data(), stride, field.cols(), samples, stream);
    cuda_launch::scale(static_cast<float>(1.0 / static_cast<double>(shape.points)), field.data(), field.size(),
                       stream);
  }
};

}  // namespace

CufftPlans& CudaBackend::cufft() {
  if (!cufft_) cufft_ = std::make_unique<CufftPlans>(stream_);
  return *cufft_;
}

void CudaBackend::spectral_conv_forward_impl(const SpectralGeometry& geometry, const Tensor& x, const Tensor& weight,
                                             Tensor& y) {
  if (x.rows() == 0) return;
  SpectralRun run{*this, cufft(), stream_, geometry, shape_of(geometry)};
  const Tensor from = run.kept_spectra(x, geometry.in_channels);
  Tensor mixed = run.complex_buffer(x.rows() * geometry.out_channels * run.shape.kept);
  cuda_launch::spectral_mix(run.shape, geometry.in_channels, geometry.out_channels, from.data(), weight.data(), false,
                            mixed.data(), x.rows(), stream_);
  run.field_from_kept(mixed, geometry.out_channels, y);
}

void CudaBackend::spectral_conv_backward_data_impl(const SpectralGeometry& geometry, const Tensor& dy,
                                                   const Tensor& weight, Tensor& dx) {
  if (dy.rows() == 0) return;
  SpectralRun run{*this, cufft(), stream_, geometry, shape_of(geometry)};
  const Tensor from = run.kept_spectra(dy, geometry.out_channels);
  Tensor mixed = run.complex_buffer(dy.rows() * geometry.in_channels * run.shape.kept);
  cuda_launch::spectral_mix(run.shape, geometry.in_channels, geometry.out_channels, from.data(), weight.data(), true,
                            mixed.data(), dy.rows(), stream_);
  run.field_from_kept(mixed, geometry.in_channels, dx);
}

void CudaBackend::spectral_conv_accumulate_weight_grad_impl(const SpectralGeometry& geometry, const Tensor& x,
                                                            const Tensor& dy, Tensor& weight_grad) {
  if (x.rows() == 0) return;
  SpectralRun run{*this, cufft(), stream_, geometry, shape_of(geometry)};
  const Tensor x_kept = run.kept_spectra(x, geometry.in_channels);
  const Tensor dy_kept = run.kept_spectra(dy, geometry.out_channels);
  cuda_launch::spectral_weight_grad(run.shape, geometry.in_channels, geometry.out_channels, x_kept.data(),
                                    dy_kept.data(), weight_grad.data(), x.rows(), stream_);
}

}  // namespace sluice::kernels
