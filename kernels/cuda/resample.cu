// Upsampling by integer factors (kernels/conv_geometry.h's ResampleGeometry), as the CPU's oneDNN resampling and
// PyTorch's interpolate compute it: nearest repeats x[⌊o / f⌋]; linear (align_corners=False) reads the source
// coordinate c = (o + 0.5) / f − 0.5 and mixes x[⌊c⌋] and x[⌊c⌋ + 1] by c − ⌊c⌋, both indices clamped to the
// field, dimension by dimension. The backward is a gather (each dx element sums the dy elements that read it, in
// a fixed order), so no atomics and the same bits every run.
#include "kernels/cuda/field_launch.h"
#include "kernels/cuda/launch_config.cuh"

namespace sluice::kernels::cuda_launch {
namespace {

// Output position o of one dimension reads source indices lo and hi with weights 1 − frac and frac.
struct Tap {
  int64_t lo;
  int64_t hi;
  float frac;
};

__device__ Tap tap_of(ResampleMode mode, int64_t o, int64_t n, int64_t f) {
  if (mode == ResampleMode::kNearest) return {o / f, o / f, 0.0f};
  const float c = (static_cast<float>(o) + 0.5f) / static_cast<float>(f) - 0.5f;
  const float floor_c = floorf(c);
  const int64_t i0 = static_cast<int64_t>(floor_c);
  const int64_t lo = i0 < 0 ? 0 : i0;
  const int64_t hi = i0 + 1 > n - 1 ? n - 1 : i0 + 1;
  return {lo, hi, c - floor_c};
}

// The weight with which output position o reads source index i (0 when it does not).
__device__ float weight_of(const Tap& t, int64_t i) {
  return (t.lo == i ? 1.0f - t.frac : 0.0f) + (t.hi == i ? t.frac : 0.0f);
}

__global__ void resample_forward_kernel(ResampleMode mode, const float* x, FieldBox in, FieldBox factor, float* y,
                                        int64_t planes) {
  const int64_t o1_extent = in.extent[1] * factor.extent[1], o2_extent = in.extent[2] * factor.extent[2];
  const int64_t out_points = in.extent[0] * factor.extent[0] * o1_extent * o2_extent;
  const int64_t in_points = in.extent[0] * in.extent[1] * in.extent[2];
  SLUICE_GRID_STRIDE(i, planes * out_points) {
    const int64_t plane = i / out_points;
    const int64_t rest = i % out_points;
    const Tap t[3] = {tap_of(mode, rest / (o1_extent * o2_extent), in.extent[0], factor.extent[0]),
                      tap_of(mode, (rest / o2_extent) % o1_extent, in.extent[1], factor.extent[1]),
                      tap_of(mode, rest % o2_extent, in.extent[2], factor.extent[2])};
    const float* source = x + plane * in_points;
    if (mode == ResampleMode::kNearest) {  // a copy: no 0 · x term that would turn an infinity into NaN
      y[i] = source[(t[0].lo * in.extent[1] + t[1].lo) * in.extent[2] + t[2].lo];
      continue;
    }
    float sum = 0.0f;
    for (int a = 0; a < 2; ++a) {
      const int64_t s0 = a == 0 ? t[0].lo : t[0].hi;
      const float w0 = a == 0 ? 1.0f - t[0].frac : t[0].frac;
      for (int b = 0; b < 2; ++b) {
        const int64_t s1 = b == 0 ? t[1].lo : t[1].hi;
        const float w1 = b == 0 ? 1.0f - t[1].frac : t[1].frac;
        for (int c = 0; c < 2; ++c) {
          const int64_t s2 = c == 0 ? t[2].lo : t[2].hi;
          const float w2 = c == 0 ? 1.0f - t[2].frac : t[2].frac;
          sum += w0 * w1 * w2 * source[(s0 * in.extent[1] + s1) * in.extent[2] + s2];
        }
      }
    }
    y[i] = sum;
  }
}

// The output positions of one dimension that can read source index i: within one source cell on either side.
__device__ void window_of(int64_t i, int64_t n, int64_t f, int64_t* begin, int64_t* end) {
  *begin = i > 0 ? (i - 1) * f : 0;
  *end = (i + 2) * f < n * f ? (i + 2) * f : n * f;
}

__global__ void resample_backward_kernel(ResampleMode mode, const float* dy, FieldBox in, FieldBox factor,
                                         float* dx, int64_t planes) {
  const int64_t o1_extent = in.extent[1] * factor.extent[1], o2_extent = in.extent[2] * factor.extent[2];
  const int64_t out_points = in.extent[0] * factor.extent[0] * o1_extent * o2_extent;
  const int64_t in_points = in.extent[0] * in.extent[1] * in.extent[2];
  SLUICE_GRID_STRIDE(i, planes * in_points) {
    const int64_t plane = i / in_points;
    const int64_t rest = i % in_points;
    const int64_t s[3] = {rest / (in.extent[1] * in.extent[2]), (rest / in.extent[2]) % in.extent[1],
                          rest % in.extent[2]};
    int64_t begin[3], end[3];
    for (int d = 0; d < 3; ++d) window_of(s[d], in.extent[d], factor.extent[d], &begin[d], &end[d]);
    const float* source = dy + plane * out_points;
    float sum = 0.0f;
    for (int64_t o0 = begin[0]; o0 < end[0]; ++o0) {
      const float w0 = weight_of(tap_of(mode, o0, in.extent[0], factor.extent[0]), s[0]);
      if (w0 == 0.0f) continue;
      for (int64_t o1 = begin[1]; o1 < end[1]; ++o1) {
        const float w1 = weight_of(tap_of(mode, o1, in.extent[1], factor.extent[1]), s[1]);
        if (w1 == 0.0f) continue;
        for (int64_t o2 = begin[2]; o2 < end[2]; ++o2) {
          const float w2 = weight_of(tap_of(mode, o2, in.extent[2], factor.extent[2]), s[2]);
          if (w2 != 0.0f) sum += w0 * w1 * w2 * source[(o0 * o1_extent + o1) * o2_extent + o2];
        }
      }
    }
    dx[i] = sum;
  }
}

}  // namespace

void resample_forward(ResampleMode mode, const float* x, const FieldBox& in, const FieldBox& factor, float* y,
                      int64_t planes, cudaStream_t stream) {
  const int64_t n = planes * in.extent[0] * in.extent[1] * in.extent[2] * factor.extent[0] * factor.extent[1] *
                    factor.extent[2];
  if (n == 0) return;
  resample_forward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(mode, x, in, factor, y, planes);
  check_launch("resample_forward_kernel");
}

void resample_backward(ResampleMode mode, const float* dy, const FieldBox& in, const FieldBox& factor, float* dx,
                       int64_t planes, cudaStream_t stream) {
  const int64_t n = planes * in.extent[0] * in.extent[1] * in.extent[2];
  if (n == 0) return;
  resample_backward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(mode, dy, in, factor, dx, planes);
  check_launch("resample_backward_kernel");
}

}  // namespace sluice::kernels::cuda_launch
