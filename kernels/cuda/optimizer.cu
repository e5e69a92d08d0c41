// SGD with momentum and AdamW updates, element for element the CPU's arithmetic (kernels/cpu/cpu_optimizer.cc).
#include "kernels/cuda/cuda_launch.h"
#include "kernels/cuda/launch_config.cuh"

namespace sluice::kernels::cuda_launch {
namespace {

__global__ void sgd_kernel(SgdHyper hyper, const float* grad, float* velocity, float* param, int64_t n) {
  SLUICE_GRID_STRIDE(i, n) {
    const float g = grad[i] + hyper.weight_decay * param[i];
    velocity[i] = hyper.momentum * velocity[i] + g;
    param[i] -= hyper.lr * velocity[i];
  }
}

__global__ void adamw_kernel(AdamWHyper hyper, float bias_correction1, float bias_correction2, const float* grad,
                             float* exp_avg, float* exp_avg_sq, float* param, int64_t n) {
  const float decay = 1.0f - hyper.lr * hyper.weight_decay;
  SLUICE_GRID_STRIDE(i, n) {
    const float g = grad[i];
    const float m = hyper.beta1 * exp_avg[i] + (1.0f - hyper.beta1) * g;
    const float v = hyper.beta2 * exp_avg_sq[i] + (1.0f - hyper.beta2) * g * g;
    exp_avg[i] = m;
    exp_avg_sq[i] = v;
    const float m_hat = m / bias_correction1;
    const float v_hat = v / bias_correction2;
    param[i] = param[i] * decay - hyper.lr * m_hat / (sqrtf(v_hat) + hyper.eps);
  }
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
  adamw_kernel<<<blocks_for(n), kThreads, 0, stream>>>(hyper, bias_correction1, bias_correction2, grad, exp_avg,
                                                       exp_avg_sq, param, n);
  check_launch("adamw_kernel");
}

}  // namespace sluice::kernels::cuda_launch
