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

}  // namespace

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
