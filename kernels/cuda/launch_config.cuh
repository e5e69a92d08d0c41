// Grid shapes shared by the element-wise kernels, and the launch check. Grid-stride loops with a capped grid
// keep one launch shape for any tensor size.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/cuda_check.h"

namespace sluice::kernels::cuda_launch {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 4096;

inline unsigned blocks_for(int64_t n) {
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>((n + kThreads - 1) / kThreads, kMaxBlocks)));
}

inline void check_launch(const char* kernel) { check_cuda(cudaGetLastError(), kernel); }

#define SLUICE_GRID_STRIDE(i, n)                                                                         \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n);                  \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

}  // namespace sluice::kernels::cuda_launch
