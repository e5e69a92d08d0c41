// Host-callable launchers for the CUDA kernels in the *.cu files. The .cu files are compiled by nvcc in a
// genrule and everything else by the normal C++ toolchain, so this header is the only bridge between them:
// plain pointers, sizes and a stream, no device code. Every launcher checks its launch and throws
// Error(kCuda) naming the kernel. Launchers that return a double (reductions) synchronise the stream.
// Semantics mirror kernels/cpu/ one to one; reductions are deterministic (fixed-shape trees, never atomics),
// so repeated runs give identical bits.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "kernels/activation.h"
#include "kernels/backend.h"
#include "kernels/rng.h"

namespace sluice::kernels::cuda_launch {

void fill(float value, float* x, int64_t n, cudaStream_t stream);
void fill_uniform(const RngStream& rng, float low, float high, float* x, int64_t n, cudaStream_t stream);
void add(const float* a, const float* b, float* out, int64_t n, cudaStream_t stream);
void axpy(float alpha, const float* x, float* y, int64_t n, cudaStream_t stream);
void scale(float alpha, float* x, int64_t n, cudaStream_t stream);
void add_bias(const float* bias, float* y, int64_t rows, int64_t cols, cudaStream_t stream);
// bias_grad += the column sums of dy; like layernorm_accumulate_param_grads, a deterministic two-pass column sum
// (deterministic_sum.cuh: fixed row slices, then the slices in order), queued without synchronising.
void accumulate_bias_grad(const float* dy, float* bias_grad, int64_t rows, int64_t cols, cudaStream_t stream);
double sum_of_squares(const float* x, int64_t n, cudaStream_t stream);
// fp32 -> bf16 (round to nearest even) for the bf16 GEMM mode; `out` holds n bf16 values (2 bytes each).
void to_bf16(const float* in, void* out, int64_t n, cudaStream_t stream);

void activation_forward(Activation activation, const float* x, float* y, int64_t n, cudaStream_t stream);
// pre[i] += bias[i % cols]; y[i] = activation(pre[i])
void bias_activation_forward(Activation activation, const float* bias, float* pre, float* y, int64_t rows,
                             int64_t cols, cudaStream_t stream);
void activation_backward(Activation activation, const float* saved, const float* dy, float* dx, int64_t n,
                         cudaStream_t stream);

void layernorm_forward(const float* x, const float* gamma, const float* beta, float eps, float* y, float* mean,
                       float* rstd, int64_t rows, int64_t cols, cudaStream_t stream);
void layernorm_backward_input(const float* dy, const float* x, const float* gamma, const float* mean,
                              const float* rstd, float* dx, int64_t rows, int64_t cols, cudaStream_t stream);
void layernorm_accumulate_param_grads(const float* dy, const float* x, const float* mean, const float* rstd,
                                      float* gamma_grad, float* beta_grad, int64_t rows, int64_t cols,
                                      cudaStream_t stream);

// out[i] = in[i] / (1 - p) where uniform(rng, i) >= p, else 0 (uniform_floats' element order, per-sample streams
// included): forward and backward are the same op.
void dropout(const float* in, float p, const RngStream& rng, float* out, int64_t n, cudaStream_t stream);

double mse(const float* pred, const float* target, float grad_scale, float* grad, int64_t n, cudaStream_t stream);
double softmax_cross_entropy(const float* logits, const float* target, float grad_scale, float* grad, int64_t rows,
                             int64_t cols, cudaStream_t stream);

void sgd_update(const SgdHyper& hyper, const float* grad, float* velocity, float* param, int64_t n,
                cudaStream_t stream);
// bias corrections 1 - beta^step are computed on the host in double, exactly as the CPU path does.
void adamw_update(const AdamWHyper& hyper, float bias_correction1, float bias_correction2, const float* grad,
                  float* exp_avg, float* exp_avg_sq, float* param, int64_t n, cudaStream_t stream);

// The updates above over many tensors, up to a few dozen per launch (multi-tensor apply); each tensor ends with
// the same bits as its per-tensor update. Tensors must not share memory (their updates run concurrently).
struct SgdTensor {
  const float* grad;
  float* velocity;
  float* param;
  int64_t n;
};
struct AdamWTensor {
  const float* grad;
  float* exp_avg;
  float* exp_avg_sq;
  float* param;
  int64_t n;
};
void sgd_update_many(const SgdHyper& hyper, const std::vector<SgdTensor>& tensors, cudaStream_t stream);
void adamw_update_many(const AdamWHyper& hyper, float bias_correction1, float bias_correction2,
                       const std::vector<AdamWTensor>& tensors, cudaStream_t stream);

}  // namespace sluice::kernels::cuda_launch
