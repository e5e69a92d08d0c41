// Index-map and mixing kernels of the spectral convolution (spectral_launch.h): one thread per output element,
// grid-stride loops, each element written once from inputs read in a fixed order.
#include "kernels/cuda/launch_config.cuh"
#include "kernels/cuda/spectral_launch.h"

namespace sluice::kernels::cuda_launch {
namespace {

// Where kept position r of a non-last dimension of extent n with m modes lies in the full spectrum: the first m
// positions are the modes 0..m−1, the next m the modes −m..−1 (kernels/spectral_geometry.h).
__device__ int64_t spectrum_index(int64_t r, int64_t m, int64_t n) { return r < m ? r : n - 2 * m + r; }

// The inverse: the kept position of spectrum index s, or −1 when s is not kept (2·m <= n, so the ranges are apart).
__device__ int64_t kept_position(int64_t s, int64_t m, int64_t n) {
  if (s < m) return s;
  if (s >= n - m) return s - n + 2 * m;
  return -1;
}

__global__ void lines_to_planes_kernel(SpectralShape shape, const float2* lines, float2* planes, int64_t channels) {
  const int64_t m = shape.m_last, lead = shape.lead_points;
  SLUICE_GRID_STRIDE(i, channels * m * lead) {
    const int64_t c = i / (m * lead);
    const int64_t rest = i % (m * lead);
    const int64_t j = rest / lead;
    const int64_t p = rest % lead;
    planes[i] = lines[(c * lead + p) * shape.half + j];
  }
}

__global__ void planes_to_lines_kernel(SpectralShape shape, const float2* planes, float2* lines, int64_t channels) {
  const int64_t m = shape.m_last, lead = shape.lead_points, half = shape.half, n = shape.n_last;
  SLUICE_GRID_STRIDE(i, channels * lead * half) {
    const int64_t c = i / (lead * half);
    const int64_t rest = i % (lead * half);
    const int64_t p = rest / half;
    const int64_t j = rest % half;
    float2 value = j < m ? planes[(c * m + j) * lead + p] : make_float2(0.0f, 0.0f);
    if (j == 0 || (n % 2 == 0 && j == n / 2)) value.y = 0.0f;
    lines[i] = value;
  }
}

__global__ void gather_kept_kernel(SpectralShape shape, const float2* planes, float2* kept, int64_t channels) {
  const int64_t m_last = shape.m_last, lead = shape.lead_points;
  SLUICE_GRID_STRIDE(i, channels * shape.kept) {
    const int64_t c = i / shape.kept;
    const int64_t k = i % shape.kept;
    int64_t rest = k / m_last;
    int64_t p = 0;
    int64_t stride = 1;
    for (int d = shape.dims - 2; d >= 0; --d) {
      const int64_t r = rest % (2 * shape.modes[d]);
      rest /= 2 * shape.modes[d];
      p += spectrum_index(r, shape.modes[d], shape.extent[d]) * stride;
      stride *= shape.extent[d];
    }
    kept[i] = planes[(c * m_last + k % m_last) * lead + p];
  }
}

__global__ void scatter_kept_kernel(SpectralShape shape, const float2* kept, float2* planes, int64_t channels) {
  const int64_t m_last = shape.m_last, lead = shape.lead_points;
  SLUICE_GRID_STRIDE(i, channels * m_last * lead) {
    const int64_t c = i / (m_last * lead);
    const int64_t rest = i % (m_last * lead);
    const int64_t j = rest / lead;
    int64_t p = rest % lead;
    int64_t k_lead = 0;
    int64_t stride = 1;
    bool is_kept = true;
    for (int d = shape.dims - 2; d >= 0; --d) {
      const int64_t r = kept_position(p % shape.extent[d], shape.modes[d], shape.extent[d]);
      p /= shape.extent[d];
      is_kept = is_kept && r >= 0;
      k_lead += r * stride;
      stride *= 2 * shape.modes[d];
    }
    planes[i] = is_kept ? kept[c * shape.kept + k_lead * m_last + j] : make_float2(0.0f, 0.0f);
  }
}

// One thread per (sample, target channel, mode); the CPU's multiply_add, term by term.
// The weight (a parameter tensor, not this file's scratch) is read as float pairs, assuming no 8-byte alignment.
__global__ void mix_kernel(int64_t kept, int64_t in_channels, int64_t out_channels, const float2* from,
                           const float* weight, bool backward, float2* to, int64_t samples) {
  const int64_t from_channels = backward ? out_channels : in_channels;
  const int64_t to_channels = backward ? in_channels : out_channels;
  const float sign = backward ? -1.0f : 1.0f;
  SLUICE_GRID_STRIDE(i, samples * to_channels * kept) {
    const int64_t n = i / (to_channels * kept);
    const int64_t t = (i / kept) % to_channels;
    const int64_t k = i % kept;
    float re = 0.0f;
    float im = 0.0f;
    for (int64_t f = 0; f < from_channels; ++f) {
      const float2 x = from[(n * from_channels + f) * kept + k];
      const int64_t pair = backward ? t * out_channels + f : f * out_channels + t;
      const float* w = weight + (pair * kept + k) * 2;
      const float a = x.x, b = x.y, c = w[0], d = sign * w[1];
      re = re + (a * c - b * d);
      im = im + (a * d + b * c);
    }
    to[i] = make_float2(re, im);
  }
}

// One thread per (input channel, output channel, mode), adding the samples in order, as the CPU's loop does.
__global__ void weight_grad_kernel(SpectralShape shape, int64_t in_channels, int64_t out_channels, const float2* x_kept,
                                   const float2* dy_kept, float* weight_grad, int64_t samples) {
  const int64_t kept = shape.kept, m_last = shape.m_last, n_last = shape.n_last;
  SLUICE_GRID_STRIDE(e, in_channels * out_channels * kept) {
    const int64_t i = e / (out_channels * kept);
    const int64_t o = (e / kept) % out_channels;
    const int64_t k = e % kept;
    const int64_t j = k % m_last;
    const bool single = j == 0 || (n_last % 2 == 0 && j == n_last / 2);
    const float scale = static_cast<float>((single ? 1.0 : 2.0) / static_cast<double>(shape.points));
    float re = weight_grad[2 * e];
    float im = weight_grad[2 * e + 1];
    for (int64_t n = 0; n < samples; ++n) {
      const float2 x = x_kept[(n * in_channels + i) * kept + k];
      const float2 dy = dy_kept[(n * out_channels + o) * kept + k];
      const float a = x.x, b = -x.y, c = dy.x * scale, d = dy.y * scale;
      re = re + (a * c - b * d);
      im = im + (a * d + b * c);
    }
    weight_grad[2 * e] = re;
    weight_grad[2 * e + 1] = im;
  }
}

const float2* complex_in(const float* values) { return reinterpret_cast<const float2*>(values); }
float2* complex_out(float* values) { return reinterpret_cast<float2*>(values); }

}  // namespace

void lines_to_planes(const SpectralShape& shape, const float* lines, float* planes, int64_t channels,
                     cudaStream_t stream) {
  const int64_t n = channels * shape.m_last * shape.lead_points;
  if (n == 0) return;
  lines_to_planes_kernel<<<blocks_for(n), kThreads, 0, stream>>>(shape, complex_in(lines), complex_out(planes),
                                                                  channels);
  check_launch("lines_to_planes_kernel");
}

void planes_to_lines(const SpectralShape& shape, const float* planes, float* lines, int64_t channels,
                     cudaStream_t stream) {
  const int64_t n = channels * shape.lead_points * shape.half;
  if (n == 0) return;
  planes_to_lines_kernel<<<blocks_for(n), kThreads, 0, stream>>>(shape, complex_in(planes), complex_out(lines),
                                                                  channels);
  check_launch("planes_to_lines_kernel");
}

void gather_kept(const SpectralShape& shape, const float* planes, float* kept, int64_t channels, cudaStream_t stream) {
  const int64_t n = channels * shape.kept;
  if (n == 0) return;
  gather_kept_kernel<<<blocks_for(n), kThreads, 0, stream>>>(shape, complex_in(planes), complex_out(kept), channels);
  check_launch("gather_kept_kernel");
}

void scatter_kept(const SpectralShape& shape, const float* kept, float* planes, int64_t channels,
                  cudaStream_t stream) {
  const int64_t n = channels * shape.m_last * shape.lead_points;
  if (n == 0) return;
  scatter_kept_kernel<<<blocks_for(n), kThreads, 0, stream>>>(shape, complex_in(kept), complex_out(planes), channels);
  check_launch("scatter_kept_kernel");
}

void spectral_mix(const SpectralShape& shape, int64_t in_channels, int64_t out_channels, const float* from,
                  const float* weight, bool backward, float* to, int64_t samples, cudaStream_t stream) {
  const int64_t n = samples * (backward ? in_channels : out_channels) * shape.kept;
  if (n == 0) return;
  mix_kernel<<<blocks_for(n), kThreads, 0, stream>>>(shape.kept, in_channels, out_channels, complex_in(from),
                                                      weight, backward, complex_out(to), samples);
  check_launch("spectral mix_kernel");
}

void spectral_weight_grad(const SpectralShape& shape, int64_t in_channels, int64_t out_channels, const float* x_kept,
                          const float* dy_kept, float* weight_grad, int64_t samples, cudaStream_t stream) {
  const int64_t n = in_channels * out_channels * shape.kept;
  if (n == 0 || samples == 0) return;
  weight_grad_kernel<<<blocks_for(n), kThreads, 0, stream>>>(shape, in_channels, out_channels, complex_in(x_kept),
                                                              complex_in(dy_kept), weight_grad, samples);
  check_launch("spectral weight_grad_kernel");
}

}  // namespace sluice::kernels::cuda_launch
