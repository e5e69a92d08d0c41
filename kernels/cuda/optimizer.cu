// SGD with momentum and AdamW updates, element for element the CPU's arithmetic (kernels/cpu/cpu_optimizer.cc),
// one tensor per launch or many (multi-tensor apply, as PyTorch's fused optimizers do).
#include "kernels/cuda/cuda_launch.h"
#include "kernels/cuda/launch_config.cuh"

namespace sluice::kernels::cuda_launch {
namespace {

// ---- The element updates: written once, so both kernel shapes give a tensor the same bits. ----

__device__ __forceinline__ void sgd_element(const SgdHyper& hyper, float grad, float& velocity, float& param) {
  const float g = grad + hyper.weight_decay * param;
  velocity = hyper.momentum * velocity + g;
  param -= hyper.lr * velocity;
}

struct AdamWScalars {
  AdamWHyper hyper;
  float bias_correction1;  // 1 - beta1^step, computed on the host in double as the CPU does
  float bias_correction2;
};

__device__ __forceinline__ float adamw_decay(const AdamWHyper& hyper) { return 1.0f - hyper.lr * hyper.weight_decay; }

__device__ __forceinline__ void adamw_element(const AdamWScalars& s, float decay, float grad, float& exp_avg,
                                              float& exp_avg_sq, float& param) {
  const float m = s.hyper.beta1 * exp_avg + (1.0f - s.hyper.beta1) * grad;
  const float v = s.hyper.beta2 * exp_avg_sq + (1.0f - s.hyper.beta2) * grad * grad;
  exp_avg = m;
  exp_avg_sq = v;
  const float m_hat = m / s.bias_correction1;
  const float v_hat = v / s.bias_correction2;
  param = param * decay - s.hyper.lr * m_hat / (sqrtf(v_hat) + s.hyper.eps);
}

// ---- One tensor per launch. ----

__global__ void sgd_kernel(SgdHyper hyper, const float* grad, float* velocity, float* param, int64_t n) {
  SLUICE_GRID_STRIDE(i, n) { sgd_element(hyper, grad[i], velocity[i], param[i]); }
}

__global__ void adamw_kernel(AdamWScalars scalars, const float* grad, float* exp_avg, float* exp_avg_sq, float* param,
                             int64_t n) {
  const float decay = adamw_decay(scalars.hyper);
  SLUICE_GRID_STRIDE(i, n) { adamw_element(scalars, decay, grad[i], exp_avg[i], exp_avg_sq[i], param[i]); }
}

// ---- Many tensors per launch. ----
// The tensors' pointers travel in the kernel's by-value argument (no device-side table to upload, so nothing
// to allocate or synchronise), which caps how many fit: kernel parameters are limited to 4 KiB. Each tensor is
// cut into chunks of kChunkElements; global chunk c belongs to the tensor t with chunk_begin[t] <= c <
// chunk_begin[t + 1]. Block b updates chunks b, b + gridDim.x, ... so one launch covers its whole group whatever
// the sizes (PyTorch instead stores one (tensor, chunk) pair per block and launches again when that table is full).

constexpr int kTensorsPerLaunch = 48;
// 64 elements per thread: big enough to amortise the chunk lookup, small enough that a mid-sized tensor still
// spreads over several blocks.
constexpr int64_t kChunkElements = 64 * kThreads;

struct ChunkMap {
  int64_t size[kTensorsPerLaunch];
  int64_t chunk_begin[kTensorsPerLaunch + 1];  // chunk_begin[count] = chunks in the launch
  int count;
};

struct SgdLaunchList {
  const float* grad[kTensorsPerLaunch];
  float* velocity[kTensorsPerLaunch];
  float* param[kTensorsPerLaunch];
  ChunkMap map;
};

struct AdamWLaunchList {
  const float* grad[kTensorsPerLaunch];
  float* exp_avg[kTensorsPerLaunch];
  float* exp_avg_sq[kTensorsPerLaunch];
  float* param[kTensorsPerLaunch];
  ChunkMap map;
};

// The whole argument list, scalars included, must fit the classic 4 KiB kernel-parameter limit.
static_assert(sizeof(SgdHyper) + sizeof(SgdLaunchList) <= 4096, "SGD multi-tensor arguments exceed 4 KiB");
static_assert(sizeof(AdamWScalars) + sizeof(AdamWLaunchList) <= 4096, "AdamW multi-tensor arguments exceed 4 KiB");

// Calls update(tensor, element) for every element of the chunks this block owns. A block's chunks ascend, so
// the tensor index only moves forward and the lookup costs at most kTensorsPerLaunch steps per block in all.
template <typename Update>
__device__ __forceinline__ void for_each_owned_element(const ChunkMap& map, Update update) {
  const int64_t chunks = map.chunk_begin[map.count];
  int tensor = 0;
  for (int64_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    while (map.chunk_begin[tensor + 1] <= chunk) ++tensor;
    const int64_t begin = (chunk - map.chunk_begin[tensor]) * kChunkElements;
    const int64_t end = begin + kChunkElements < map.size[tensor] ? begin + kChunkElements : map.size[tensor];
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) update(tensor, i);
  }
}

// __grid_constant__: the kernel reads the argument in place instead of copying ~2 KiB into each thread's stack,
// which indexing it by a run-time tensor number would otherwise force.
__global__ void sgd_many_kernel(SgdHyper hyper, const __grid_constant__ SgdLaunchList list) {
  for_each_owned_element(list.map, [&](int t, int64_t i) {
    sgd_element(hyper, list.grad[t][i], list.velocity[t][i], list.param[t][i]);
  });
}

__global__ void adamw_many_kernel(AdamWScalars scalars, const __grid_constant__ AdamWLaunchList list) {
  const float decay = adamw_decay(scalars.hyper);
  for_each_owned_element(list.map, [&](int t, int64_t i) {
    adamw_element(scalars, decay, list.grad[t][i], list.exp_avg[t][i], list.exp_avg_sq[t][i], list.param[t][i]);
  });
}

// Appends a tensor of n > 0 elements; returns true when the map is full and must be launched.
bool add_tensor(ChunkMap& map, int64_t n) {
  map.size[map.count] = n;
  map.chunk_begin[map.count + 1] = map.chunk_begin[map.count] + (n + kChunkElements - 1) / kChunkElements;
  ++map.count;
  return map.count == kTensorsPerLaunch;
}

unsigned blocks_for_chunks(const ChunkMap& map) {
  return static_cast<unsigned>(std::min<int64_t>(map.chunk_begin[map.count], kMaxBlocks));
}

}  // namespace

void sgd_update(const SgdHyper& hyper, const float* grad, float* velocity, float* param, int64_t n,
                cudaStream_t stream) {
  if (n == 0) return;
  sgd_kernel<<<blocks_for(n), kThreads, 0, stream>>>(hyper, grad, velocity, param, n);
  check_launch("sgd_kernel");
}

void adamw_update(const AdamWHyper& hyper, float bias_correction1, float bias_correction2, const float* grad,
                  float* exp_avg, float* exp_avg_sq, float* param, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  const AdamWScalars scalars{hyper, bias_correction1, bias_correction2};
  adamw_kernel<<<blocks_for(n), kThreads, 0, stream>>>(scalars, grad, exp_avg, exp_avg_sq, param, n);
  check_launch("adamw_kernel");
}

void sgd_update_many(const SgdHyper& hyper, const std::vector<SgdTensor>& tensors, cudaStream_t stream) {
  SgdLaunchList list{};
  auto launch = [&] {
    sgd_many_kernel<<<blocks_for_chunks(list.map), kThreads, 0, stream>>>(hyper, list);
    check_launch("sgd_many_kernel");
    list = SgdLaunchList{};
  };
  for (const SgdTensor& tensor : tensors) {
    if (tensor.n == 0) continue;  // nothing to update, and a zero-chunk entry would only cost a lookup step
    const int slot = list.map.count;
    list.grad[slot] = tensor.grad;
    list.velocity[slot] = tensor.velocity;
    list.param[slot] = tensor.param;
    if (add_tensor(list.map, tensor.n)) launch();
  }
  if (list.map.count > 0) launch();
}

void adamw_update_many(const AdamWHyper& hyper, float bias_correction1, float bias_correction2,
                       const std::vector<AdamWTensor>& tensors, cudaStream_t stream) {
  const AdamWScalars scalars{hyper, bias_correction1, bias_correction2};
  AdamWLaunchList list{};
  auto launch = [&] {
    adamw_many_kernel<<<blocks_for_chunks(list.map), kThreads, 0, stream>>>(scalars, list);
    check_launch("adamw_many_kernel");
    list = AdamWLaunchList{};
  };
  for (const AdamWTensor& tensor : tensors) {
    if (tensor.n == 0) continue;
    const int slot = list.map.count;
    list.grad[slot] = tensor.grad;
    list.exp_avg[slot] = tensor.exp_avg;
    list.exp_avg_sq[slot] = tensor.exp_avg_sq;
    list.param[slot] = tensor.param;
    if (add_tensor(list.map, tensor.n)) launch();
  }
  if (list.map.count > 0) launch();
}

}  // namespace sluice::kernels::cuda_launch
