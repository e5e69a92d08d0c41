// Sums of many terms in double with a fixed reduction tree: kSumBlocks blocks of kThreads threads each add a
// fixed stride of terms, then a fixed shared-memory tree, then one block adds the block partials in order.
// The order depends only on n, never on timing, so a result is reproducible bit for bit (atomics are not).
// It is a different order from the CPU's sequential loop, hence agreement to rounding, not to the bit.
#pragma once

#include <cuda_runtime.h>

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

}  // namespace sluice::kernels::cuda_launch
