// Sums of many terms in double with a fixed reduction tree: kSumBlocks blocks of kThreads threads each add a
// fixed stride of terms, then a fixed shared-memory tree, then one block adds the block partials in order.
// The order depends only on n, never on timing, so a result is reproducible bit for bit (atomics are not).
// It is a different order from the CPU's sequential loop, hence agreement to rounding, not to the bit.
// Column sums (accumulate_column_sums, below) follow the same rule with a two-pass shape of their own.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch_config.cuh"

namespace sluice::kernels::cuda_launch {

constexpr int kSumBlocks = 256;

// Tree-reduces `value` over a block of kThreads threads; thread 0 gets the total.
__device__ inline double block_sum(double value) {
  __shared__ double partial[kThreads];
  partial[threadIdx.x] = value;
  __syncthreads();
  for (int width = kThreads / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) partial[threadIdx.x] += partial[threadIdx.x + width];
    __syncthreads();
  }
  const double total = partial[0];
  __syncthreads();  // the buffer may be reused by the caller's next block_sum
  return total;
}

template <typename Term>
__global__ void partial_sums_kernel(Term term, int64_t n, double* partials) {
  double acc = 0.0;
  SLUICE_GRID_STRIDE(i, n) { acc += term(i); }
  const double total = block_sum(acc);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// A template only so that every .cu file including this header may instantiate it without a duplicate symbol.
template <int kPartials>
__global__ void final_sum_kernel(const double* partials, double* result) {
  double acc = 0.0;
  for (int i = threadIdx.x; i < kPartials; i += kThreads) acc += partials[i];
  const double total = block_sum(acc);
  if (threadIdx.x == 0) *result = total;
}

// sum over i in [0, n) of term(i); `term` is a device functor. Synchronises `stream` to return the value.
template <typename Term>
double deterministic_sum(Term term, int64_t n, cudaStream_t stream, const char* what) {
  double* scratch = nullptr;
  check_cuda(cudaMallocAsync(reinterpret_cast<void**>(&scratch), (kSumBlocks + 1) * sizeof(double), stream), what);
  partial_sums_kernel<<<kSumBlocks, kThreads, 0, stream>>>(term, n, scratch);
  check_launch(what);
  final_sum_kernel<kSumBlocks><<<1, kThreads, 0, stream>>>(scratch, scratch + kSumBlocks);
  check_launch(what);
  double result = 0.0;
  check_cuda(cudaMemcpyAsync(&result, scratch + kSumBlocks, sizeof(double), cudaMemcpyDeviceToHost, stream), what);
  check_cuda(cudaFreeAsync(scratch, stream), what);
  check_cuda(cudaStreamSynchronize(stream), what);
  return result;
}

// ---------------------------------------------------------------------------------------------------------------
// Column sums: out_k[c] += sum over rows r of term_k(r, c), for the parameter gradients of bias and LayerNorm
// (dy is rows x cols, the gradient 1 x cols). One thread per column looping over every row leaves a GPU idle
// (8192 x 4096: 16 blocks of 256 threads, each thread 8192 dependent loads), so the rows are cut into slices:
//
//   slices = min(kColumnSlices, rows); slice s holds rows [rows * s / slices, rows * (s + 1) / slices), which is
//   never empty because slices <= rows.
//   Pass 1, grid (column blocks, slices): blockIdx.y is the slice; each thread adds its column over its slice's
//     rows top to bottom in float, starting from 0, and stores partials[(k * slices + s) * cols + c].
//   Pass 2, one thread per column: adds the slices' partials in slice order (s = 0, 1, ...) in float, starting
//     from 0, then adds that total into out_k[c] (the ops accumulate: grad += ...).
//
// Every column's order of additions is fixed by `rows` alone: not by the grid's x size, the device, or timing,
// and there are no atomics, so results are identical bit for bit run to run and across GPU models. The CPU adds
// each row straight into the gradient, top to bottom; this order differs from it only by rounding. With
// rows <= kColumnSlices every slice is one row, so the total is the CPU's row order summed from 0 and then added.
// The partial buffer (kSums * slices * cols floats, at most kSums times dy's size) comes from the stream-ordered
// pool and is released on the same stream after pass 2.
constexpr int kColumnSlices = 64;  // fixed, not per device: 8192 x 4096 gives 16 x 64 blocks, 128 rows per thread

// Up to a few output vectors written by one pair of launches (bias: 1, LayerNorm: gamma and beta).
template <int kSums>
struct ColumnOutputs {
  float* out[kSums];
};

// Pass 1. `Terms` provides kSums and `void operator()(int64_t r, int64_t c, float (&acc)[kSums]) const`, which adds
// row r's terms of column c into acc in a fixed order.
template <typename Terms>
__global__ void column_slice_sums_kernel(Terms terms, int64_t rows, int64_t cols, int slices, float* partials) {
  const int64_t slice = blockIdx.y;
  const int64_t begin = rows * slice / slices;
  const int64_t end = rows * (slice + 1) / slices;
  SLUICE_GRID_STRIDE(c, cols) {
    float acc[Terms::kSums];
    for (int k = 0; k < Terms::kSums; ++k) acc[k] = 0.0f;
    for (int64_t r = begin; r < end; ++r) terms(r, c, acc);
    for (int k = 0; k < Terms::kSums; ++k) partials[(static_cast<int64_t>(k) * slices + slice) * cols + c] = acc[k];
  }
}

// Pass 2.
template <int kSums>
__global__ void add_column_slices_kernel(const float* partials, int64_t cols, int slices,
                                         ColumnOutputs<kSums> outputs) {
  SLUICE_GRID_STRIDE(c, cols) {
    for (int k = 0; k < kSums; ++k) {
      const float* column = partials + static_cast<int64_t>(k) * slices * cols + c;
      float total = 0.0f;
      for (int s = 0; s < slices; ++s) total += column[static_cast<int64_t>(s) * cols];
      outputs.out[k][c] += total;
    }
  }
}

// Device scratch from the stream-ordered pool, released on the same stream when it goes out of scope (also when a
// launch check throws), so the release is queued after every kernel queued while it was alive.
class StreamScratch {
 public:
  StreamScratch(size_t bytes, cudaStream_t stream, const char* what) : stream_(stream) {
    check_cuda(cudaMallocAsync(&data_, bytes, stream), what);
  }
  ~StreamScratch() {
    if (data_ != nullptr) cudaFreeAsync(data_, stream_);  // cannot throw from a destructor
  }
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;
  float* floats() const { return static_cast<float*>(data_); }

 private:
  void* data_ = nullptr;
  cudaStream_t stream_;
};

// Queues both passes on `stream`; returns without synchronising. rows == 0 or cols == 0 adds nothing (as the CPU).
template <typename Terms>
void accumulate_column_sums(const Terms& terms, int64_t rows, int64_t cols, ColumnOutputs<Terms::kSums> outputs,
                            cudaStream_t stream, const char* what) {
  if (rows <= 0 || cols <= 0) return;
  const int slices = static_cast<int>(std::min<int64_t>(kColumnSlices, rows));
  const StreamScratch partials(static_cast<size_t>(Terms::kSums) * static_cast<size_t>(slices) *
                                   static_cast<size_t>(cols) * sizeof(float),
                               stream, what);
  // x: column blocks, capped at kMaxBlocks (the kernels stride over wider matrices); y: slices <= 64 << 65535.
  const dim3 pass1_grid(blocks_for(cols), static_cast<unsigned>(slices));
  column_slice_sums_kernel<Terms><<<pass1_grid, kThreads, 0, stream>>>(terms, rows, cols, slices, partials.floats());
  check_launch(what);
  add_column_slices_kernel<Terms::kSums><<<blocks_for(cols), kThreads, 0, stream>>>(partials.floats(), cols, slices,
                                                                                    outputs);
  check_launch(what);
}

}  // namespace sluice::kernels::cuda_launch
