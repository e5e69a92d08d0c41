// Group norm and layernorm over a field's channels (field_launch.h), the CPU's loops (kernels/cpu/cpu_field_norm.cc)
// with each set's sums spread over one block: every thread sums a fixed stride of the set's elements in double,
// then a fixed-shape tree in shared memory adds the threads' sums. No atomics: the same bits every run; the CPU
// sums in element order, so the two agree to rounding. Group norm in pieces (a tile's sums; normalize and dx with
// statistics given) for the per-tile statistics of a split field, the same way.
#include <math.h>

#include "kernels/cuda/field_launch.h"
#include "kernels/cuda/launch_config.cuh"

namespace sluice::kernels::cuda_launch {
namespace {

constexpr int kMaxNormThreads = 256;

__device__ int64_t offset_of(const NormSets& t, int64_t s, int64_t k) {
  return s * t.set_stride + k * t.element_stride;
}

// The set (within its sample) that sample offset o belongs to.
__device__ int64_t set_of(const NormSets& t, int64_t o) { return t.per_point ? o % t.points : o / t.set_stride; }

// Sums a and b over the block (blockDim.x a power of two, at most kMaxNormThreads) by a fixed tree; every thread
// gets the totals.
__device__ void block_sum2(double& a, double& b) {
  __shared__ double shared_a[kMaxNormThreads];
  __shared__ double shared_b[kMaxNormThreads];
  shared_a[threadIdx.x] = a;
  shared_b[threadIdx.x] = b;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      shared_a[threadIdx.x] += shared_a[threadIdx.x + stride];
      shared_b[threadIdx.x] += shared_b[threadIdx.x + stride];
    }
    __syncthreads();
  }
  a = shared_a[0];
  b = shared_b[0];
  __syncthreads();  // every thread has read the totals before a next call overwrites them
}

// One block per (sample, set).
__global__ void norm_forward_kernel(NormSets t, const float* x, const float* w, const float* b, float* y,
                                    float* mean, float* rstd) {
  const int64_t set_index = blockIdx.x;
  const int64_t n = set_index / t.sets, s = set_index % t.sets;
  const float* in = x + n * t.features;
  float* out = y + n * t.features;
  double sum = 0.0, unused = 0.0;
  for (int64_t k = threadIdx.x; k < t.size; k += blockDim.x) sum += in[offset_of(t, s, k)];
  block_sum2(sum, unused);
  const double mu = sum / static_cast<double>(t.size);
  double squares = 0.0;
  for (int64_t k = threadIdx.x; k < t.size; k += blockDim.x) {
    const double d = in[offset_of(t, s, k)] - mu;
    squares += d * d;
  }
  block_sum2(squares, unused);
  const float set_mean = static_cast<float>(mu);
  const float set_rstd = static_cast<float>(1.0 / sqrt(squares / static_cast<double>(t.size) + t.eps));
  if (threadIdx.x == 0) {
    mean[set_index] = set_mean;
    rstd[set_index] = set_rstd;
  }
  for (int64_t k = threadIdx.x; k < t.size; k += blockDim.x) {
    const int64_t o = offset_of(t, s, k);
    const int64_t c = o / t.points;
    out[o] = w[c] * ((in[o] - set_mean) * set_rstd) + b[c];
  }
}

// dx = rstd · (g − mean(g) − x̂ · mean(g · x̂)) per set, with g = dy · weight[c]; one block per (sample, set).
__global__ void norm_backward_input_kernel(NormSets t, const float* dy, const float* x, const float* w,
                                           const float* mean, const float* rstd, float* dx) {
  const int64_t set_index = blockIdx.x;
  const int64_t n = set_index / t.sets, s = set_index % t.sets;
  const float* in = x + n * t.features;
  const float* grad = dy + n * t.features;
  float* out = dx + n * t.features;
  const float set_mean = mean[set_index];
  const float set_rstd = rstd[set_index];
  double sum_g = 0.0, sum_g_xhat = 0.0;
  for (int64_t k = threadIdx.x; k < t.size; k += blockDim.x) {
    const int64_t o = offset_of(t, s, k);
    const float g = grad[o] * w[o / t.points];
    sum_g += g;
    sum_g_xhat += static_cast<double>(g) * ((in[o] - set_mean) * set_rstd);
  }
  block_sum2(sum_g, sum_g_xhat);
  const float mean_g = static_cast<float>(sum_g / static_cast<double>(t.size));
  const float mean_g_xhat = static_cast<float>(sum_g_xhat / static_cast<double>(t.size));
  for (int64_t k = threadIdx.x; k < t.size; k += blockDim.x) {
    const int64_t o = offset_of(t, s, k);
    const float g = grad[o] * w[o / t.points];
    const float xhat = (in[o] - set_mean) * set_rstd;
    out[o] = set_rstd * (g - mean_g - xhat * mean_g_xhat);
  }
}

// One block per channel: its elements over all samples (sample-major), summed in double, added once.
__global__ void norm_param_grads_kernel(NormSets t, int64_t samples, const float* dy, const float* x,
                                        const float* mean, const float* rstd, float* weight_grad, float* bias_grad) {
  const int64_t c = blockIdx.x;
  double weight_sum = 0.0, bias_sum = 0.0;
  for (int64_t j = threadIdx.x; j < samples * t.points; j += blockDim.x) {
    const int64_t n = j / t.points;
    const int64_t o = c * t.points + j % t.points;
    const int64_t stat = n * t.sets + set_of(t, o);
    const float g = dy[n * t.features + o];
    weight_sum += static_cast<double>(g) * ((x[n * t.features + o] - mean[stat]) * rstd[stat]);
    bias_sum += g;
  }
  block_sum2(weight_sum, bias_sum);
  if (threadIdx.x == 0) {
    weight_grad[c] += static_cast<float>(weight_sum);
    bias_grad[c] += static_cast<float>(bias_sum);
  }
}

// Group norm in pieces (a tile's partial sums; normalize and dx with given statistics: kernels/tiled_norm.h), group
// sets only (element_stride 1). One block per (sample, group) for the sums: sums[2 · set] = Σ x,
// sums[2 · set + 1] = Σ (x − Σ x / size)², in double, a fixed stride per thread and block_sum2's fixed tree.
__global__ void group_partial_sums_kernel(NormSets t, const float* x, double* sums) {
  const int64_t set_index = blockIdx.x;
  const int64_t n = set_index / t.sets, s = set_index % t.sets;
  const float* in = x + n * t.features + s * t.set_stride;
  double sum = 0.0, unused = 0.0;
  for (int64_t k = threadIdx.x; k < t.size; k += blockDim.x) sum += in[k];
  block_sum2(sum, unused);
  const double mu = sum / static_cast<double>(t.size);
  double squares = 0.0;
  for (int64_t k = threadIdx.x; k < t.size; k += blockDim.x) {
    const double d = in[k] - mu;
    squares += d * d;
  }
  block_sum2(squares, unused);
  if (threadIdx.x == 0) {
    sums[2 * set_index] = sum;
    sums[2 * set_index + 1] = squares;
  }
}

// sums[2 · set] = Σ g, sums[2 · set + 1] = Σ g · x̂ with g = dy · weight[c], x̂ = (x − mean) · rstd.
__global__ void group_backward_partial_sums_kernel(NormSets t, const float* dy, const float* x, const float* w,
                                                   const float* mean, const float* rstd, double* sums) {
  const int64_t set_index = blockIdx.x;
  const int64_t n = set_index / t.sets, s = set_index % t.sets;
  const int64_t first = n * t.features + s * t.set_stride;
  const float set_mean = mean[set_index];
  const float set_rstd = rstd[set_index];
  double sum_g = 0.0, sum_g_xhat = 0.0;
  for (int64_t k = threadIdx.x; k < t.size; k += blockDim.x) {
    const int64_t o = s * t.set_stride + k;  // offset within the sample
    const float g = dy[first + k] * w[o / t.points];
    sum_g += g;
    sum_g_xhat += static_cast<double>(g) * ((x[first + k] - set_mean) * set_rstd);
  }
  block_sum2(sum_g, sum_g_xhat);
  if (threadIdx.x == 0) {
    sums[2 * set_index] = sum_g;
    sums[2 * set_index + 1] = sum_g_xhat;
  }
}

// One thread per element: y = w[c] · ((x − mean) · rstd) + b[c], the set's given statistics.
__global__ void group_normalize_kernel(NormSets t, int64_t total, const float* x, const float* w, const float* b,
                                       const float* mean, const float* rstd, float* y) {
  SLUICE_GRID_STRIDE(i, total) {
    const int64_t n = i / t.features, o = i % t.features;
    const int64_t stat = n * t.sets + o / t.set_stride, c = o / t.points;
    y[i] = w[c] * ((x[i] - mean[stat]) * rstd[stat]) + b[c];
  }
}

// One thread per element: dx = rstd · (g − mean_g − x̂ · mean_g_xhat), the set's given means.
__global__ void group_backward_with_sums_kernel(NormSets t, int64_t total, const float* dy, const float* x,
                                                const float* w, const float* mean, const float* rstd,
                                                const float* mean_g, const float* mean_g_xhat, float* dx) {
  SLUICE_GRID_STRIDE(i, total) {
    const int64_t n = i / t.features, o = i % t.features;
    const int64_t stat = n * t.sets + o / t.set_stride;
    const float set_rstd = rstd[stat];
    const float g = dy[i] * w[o / t.points];
    const float xhat = (x[i] - mean[stat]) * set_rstd;
    dx[i] = set_rstd * (g - mean_g[stat] - xhat * mean_g_xhat[stat]);
  }
}

// The smallest power of two >= n, at most kMaxNormThreads (block_sum2 needs a power of two).
unsigned threads_for_set(int64_t n) {
  unsigned threads = 1;
  while (threads < kMaxNormThreads && threads < n) threads *= 2;
  return threads;
}

// Runs `launch(device_sums)` (one block per set writing 2 doubles each), copies the sums to `host_sums` and waits.
template <typename Launch>
void sums_to_host(int64_t sets, double* host_sums, cudaStream_t stream, const char* what, Launch&& launch) {
  double* device_sums = nullptr;
  const size_t bytes = static_cast<size_t>(2 * sets) * sizeof(double);
  check_cuda(cudaMallocAsync(reinterpret_cast<void**>(&device_sums), bytes, stream), what);
  launch(device_sums);
  const cudaError_t launched = cudaGetLastError();
  if (launched != cudaSuccess) {
    cudaFreeAsync(device_sums, stream);  // the launch's error is the one to report
    check_cuda(launched, what);
  }
  check_cuda(cudaMemcpyAsync(host_sums, device_sums, bytes, cudaMemcpyDeviceToHost, stream), what);
  check_cuda(cudaFreeAsync(device_sums, stream), what);
  check_cuda(cudaStreamSynchronize(stream), what);
}

}  // namespace

void group_norm_partial_sums(const NormSets& sets, int64_t samples, const float* x, double* host_sums,
                             cudaStream_t stream) {
  const int64_t blocks = samples * sets.sets;
  if (blocks == 0) return;
  sums_to_host(blocks, host_sums, stream, "group_partial_sums_kernel", [&](double* sums) {
    group_partial_sums_kernel<<<static_cast<unsigned>(blocks), threads_for_set(sets.size), 0, stream>>>(sets, x,
                                                                                                       sums);
  });
}

void group_norm_backward_partial_sums(const NormSets& sets, int64_t samples, const float* dy, const float* x,
                                      const float* weight, const float* mean, const float* rstd, double* host_sums,
                                      cudaStream_t stream) {
  const int64_t blocks = samples * sets.sets;
  if (blocks == 0) return;
  sums_to_host(blocks, host_sums, stream, "group_backward_partial_sums_kernel", [&](double* sums) {
    group_backward_partial_sums_kernel<<<static_cast<unsigned>(blocks), threads_for_set(sets.size), 0, stream>>>(
        sets, dy, x, weight, mean, rstd, sums);
  });
}

void group_norm_normalize(const NormSets& sets, int64_t samples, const float* x, const float* weight,
                          const float* bias, const float* mean, const float* rstd, float* y, cudaStream_t stream) {
  const int64_t total = samples * sets.features;
  if (total == 0) return;
  group_normalize_kernel<<<blocks_for(total), kThreads, 0, stream>>>(sets, total, x, weight, bias, mean, rstd, y);
  check_launch("group_normalize_kernel");
}

void group_norm_backward_with_sums(const NormSets& sets, int64_t samples, const float* dy, const float* x,
                                   const float* weight, const float* mean, const float* rstd, const float* mean_g,
                                   const float* mean_g_xhat, float* dx, cudaStream_t stream) {
  const int64_t total = samples * sets.features;
  if (total == 0) return;
  group_backward_with_sums_kernel<<<blocks_for(total), kThreads, 0, stream>>>(sets, total, dy, x, weight, mean, rstd,
                                                                              mean_g, mean_g_xhat, dx);
  check_launch("group_backward_with_sums_kernel");
}

void norm_forward(const NormSets& sets, int64_t samples, const float* x, const float* weight, const float* bias,
                  float* y, float* mean, float* rstd, cudaStream_t stream) {
  const int64_t blocks = samples * sets.sets;
  if (blocks == 0) return;
  norm_forward_kernel<<<static_cast<unsigned>(blocks), threads_for_set(sets.size), 0, stream>>>(sets, x, weight, bias,
                                                                                               y, mean, rstd);
  check_launch("norm_forward_kernel");
}

void norm_backward_input(const NormSets& sets, int64_t samples, const float* dy, const float* x, const float* weight,
                         const float* mean, const float* rstd, float* dx, cudaStream_t stream) {
  const int64_t blocks = samples * sets.sets;
  if (blocks == 0) return;
  norm_backward_input_kernel<<<static_cast<unsigned>(blocks), threads_for_set(sets.size), 0, stream>>>(
      sets, dy, x, weight, mean, rstd, dx);
  check_launch("norm_backward_input_kernel");
}

void norm_param_grads(const NormSets& sets, int64_t samples, int64_t channels, const float* dy, const float* x,
                      const float* mean, const float* rstd, float* weight_grad, float* bias_grad,
                      cudaStream_t stream) {
  if (channels == 0 || samples == 0) return;
  norm_param_grads_kernel<<<static_cast<unsigned>(channels), kMaxNormThreads, 0, stream>>>(
      sets, samples, dy, x, mean, rstd, weight_grad, bias_grad);
  check_launch("norm_param_grads_kernel");
}

}  // namespace sluice::kernels::cuda_launch
