// Index-map kernels of the field ops (field_launch.h): one thread per output element, grid-stride loops.
#include "kernels/cuda/field_launch.h"
#include "kernels/cuda/launch_config.cuh"

namespace sluice::kernels::cuda_launch {
namespace {

__global__ void window_copy_kernel(const float* src, FieldBox src_box, float* dst, FieldBox dst_box, FieldBox offset,
                                   int64_t planes) {
  const int64_t dst_points = dst_box.extent[0] * dst_box.extent[1] * dst_box.extent[2];
  const int64_t src_points = src_box.extent[0] * src_box.extent[1] * src_box.extent[2];
  SLUICE_GRID_STRIDE(i, planes * dst_points) {
    const int64_t plane = i / dst_points;
    int64_t rest = i % dst_points;
    const int64_t z = rest / (dst_box.extent[1] * dst_box.extent[2]) - offset.extent[0];
    rest %= dst_box.extent[1] * dst_box.extent[2];
    const int64_t y = rest / dst_box.extent[2] - offset.extent[1];
    const int64_t x = rest % dst_box.extent[2] - offset.extent[2];
    const bool inside = z >= 0 && z < src_box.extent[0] && y >= 0 && y < src_box.extent[1] && x >= 0 &&
                        x < src_box.extent[2];
    dst[i] = inside ? src[plane * src_points + (z * src_box.extent[1] + y) * src_box.extent[2] + x] : 0.0f;
  }
}

__global__ void copy_columns_kernel(const float* source, int64_t source_cols, int64_t source_col, float* destination,
                                    int64_t destination_cols, int64_t destination_col, int64_t rows, int64_t count,
                                    bool add) {
  SLUICE_GRID_STRIDE(i, rows * count) {
    const int64_t r = i / count;
    const int64_t j = i % count;
    const float value = source[r * source_cols + source_col + j];
    float& target = destination[r * destination_cols + destination_col + j];
    target = add ? target + value : value;
  }
}

// The CPU's rule (kernels/cpu/cpu_conv.cc): the source of relative position q (q = padded position − low).
__device__ int64_t pad_source(PadMode mode, int64_t q, int64_t n) {
  if (mode == PadMode::kPeriodic) return ((q % n) + n) % n;
  if (q < 0) return -q;
  if (q >= n) return 2 * (n - 1) - q;
  return q;
}

// The padded positions (ascending, at most 3) whose source is s, in one dimension of extent n padded by low/high.
// Periodic padding is at most the extent, so the wraps are q = s − n, s, s + n; reflect mirrors once per side.
__device__ int pad_targets(PadMode mode, int64_t s, int64_t n, int64_t low, int64_t padded, int64_t* targets) {
  int count = 0;
  const int64_t candidates[3] = {mode == PadMode::kPeriodic ? s - n : -s, s,
                                 mode == PadMode::kPeriodic ? s + n : 2 * (n - 1) - s};
  for (int k = 0; k < 3; ++k) {
    const int64_t p = candidates[k] + low;
    if (p < 0 || p >= padded) continue;
    if (k != 1 && candidates[k] == s) continue;  // reflect at the edges: −0 and 2(n−1)−(n−1) are s itself
    targets[count++] = p;
  }
  return count;
}

__global__ void pad_forward_kernel(PadMode mode, const float* x, FieldBox in, FieldBox low, float* y, FieldBox padded,
                                   int64_t planes) {
  const int64_t out_points = padded.extent[0] * padded.extent[1] * padded.extent[2];
  const int64_t in_points = in.extent[0] * in.extent[1] * in.extent[2];
  SLUICE_GRID_STRIDE(i, planes * out_points) {
    const int64_t plane = i / out_points;
    int64_t rest = i % out_points;
    const int64_t p0 = rest / (padded.extent[1] * padded.extent[2]);
    rest %= padded.extent[1] * padded.extent[2];
    const int64_t s0 = pad_source(mode, p0 - low.extent[0], in.extent[0]);
    const int64_t s1 = pad_source(mode, rest / padded.extent[2] - low.extent[1], in.extent[1]);
    const int64_t s2 = pad_source(mode, rest % padded.extent[2] - low.extent[2], in.extent[2]);
    y[i] = x[plane * in_points + (s0 * in.extent[1] + s1) * in.extent[2] + s2];
  }
}

__global__ void pad_backward_kernel(PadMode mode, const float* dy, FieldBox padded, FieldBox low, float* dx,
                                    FieldBox in, int64_t planes) {
  const int64_t out_points = padded.extent[0] * padded.extent[1] * padded.extent[2];
  const int64_t in_points = in.extent[0] * in.extent[1] * in.extent[2];
  SLUICE_GRID_STRIDE(i, planes * in_points) {
    const int64_t plane = i / in_points;
    int64_t rest = i % in_points;
    const int64_t s[3] = {rest / (in.extent[1] * in.extent[2]), (rest % (in.extent[1] * in.extent[2])) / in.extent[2],
                          rest % in.extent[2]};
    int64_t targets[3][3];
    int counts[3];
    for (int d = 0; d < 3; ++d) {
      counts[d] = pad_targets(mode, s[d], in.extent[d], low.extent[d], padded.extent[d], targets[d]);
    }
    const float* source = dy + plane * out_points;
    float sum = 0.0f;
    for (int a = 0; a < counts[0]; ++a) {
      for (int b = 0; b < counts[1]; ++b) {
        const int64_t row = (targets[0][a] * padded.extent[1] + targets[1][b]) * padded.extent[2];
        for (int c = 0; c < counts[2]; ++c) sum += source[row + targets[2][c]];
      }
    }
    dx[i] = sum;
  }
}

}  // namespace

void pad_forward(PadMode mode, const float* x, const FieldBox& in, const FieldBox& low, float* y,
                 const FieldBox& padded, int64_t planes, cudaStream_t stream) {
  const int64_t n = planes * padded.extent[0] * padded.extent[1] * padded.extent[2];
  if (n == 0) return;
  pad_forward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(mode, x, in, low, y, padded, planes);
  check_launch("pad_forward_kernel");
}

void pad_backward(PadMode mode, const float* dy, const FieldBox& padded, const FieldBox& low, float* dx,
                  const FieldBox& in, int64_t planes, cudaStream_t stream) {
  const int64_t n = planes * in.extent[0] * in.extent[1] * in.extent[2];
  if (n == 0) return;
  pad_backward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(mode, dy, padded, low, dx, in, planes);
  check_launch("pad_backward_kernel");
}

void window_copy(const float* src, const FieldBox& src_extents, float* dst, const FieldBox& dst_extents,
                 const FieldBox& offset, int64_t planes, cudaStream_t stream) {
  const int64_t n = planes * dst_extents.extent[0] * dst_extents.extent[1] * dst_extents.extent[2];
  if (n == 0) return;
  window_copy_kernel<<<blocks_for(n), kThreads, 0, stream>>>(src, src_extents, dst, dst_extents, offset, planes);
  check_launch("window_copy_kernel");
}

void copy_columns(const float* source, int64_t source_cols, int64_t source_col, float* destination,
                  int64_t destination_cols, int64_t destination_col, int64_t rows, int64_t count, bool add,
                  cudaStream_t stream) {
  const int64_t n = rows * count;
  if (n == 0) return;
  copy_columns_kernel<<<blocks_for(n), kThreads, 0, stream>>>(source, source_cols, source_col, destination,
                                                              destination_cols, destination_col, rows, count, add);
  check_launch("copy_columns_kernel");
}

}  // namespace sluice::kernels::cuda_launch
