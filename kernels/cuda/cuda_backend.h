// Backend on one NVIDIA GPU: device tensors from a stream-ordered pool (CudaBuffer), GEMM through cuBLAS,
// everything else through the kernels in the *.cu files. All work is queued on one compute stream in call
// order, so the Backend's sequential semantics hold without host synchronisation; only ops returning a value
// to the host (to_host, sum_of_squares, the losses) wait for the stream.
// Semantics are kernels/cpu/'s: same accumulate-vs-overwrite conventions, same Philox dropout masks, same
// loss scaling. Agreement with the CPU is to rounding (different reduction order, device tanh/exp), not to
// the bit; the .cu files are compiled with --fmad=false so element-wise ops round as the CPU's do.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <memory>

#include "kernels/backend.h"
#include "kernels/cuda/cuda_host_staging.h"
#include "kernels/gemm_precision.h"

namespace sluice::kernels {

class CudaBackend : public Backend {
 public:
  // Creates a context on `device_ordinal`; throws Error(kCuda) naming the failing call (no device, bad ordinal).
  // GEMMs start in fp32; set_gemm_precision switches (the trainer sets it from the config's gemm_precision).
  explicit CudaBackend(int device_ordinal);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  int device_ordinal() const { return device_ordinal_; }
  cudaStream_t stream() const { return stream_; }
  // A second non-blocking stream for communication libraries (NCCL), created on first use: every NCCL call of
  // this rank goes there, so transfers overlap compute, and the calls of different communicators (pipeline
  // transfers, data-parallel sums) run one after another in issue order rather than concurrently, which NCCL
  // warns can deadlock. Ordering against stream() is the caller's job (CUDA events).
  cudaStream_t communication_stream();
  // Waits for everything queued so far (benchmarks, and before handing device memory to another library).
  void synchronize();

  Device device() const override { return Device::kCuda; }
  std::string device_name() const override { return "cuda:" + std::to_string(device_ordinal_); }
  // Every mode is available; it applies to the gemm calls made after it.
  void set_gemm_precision(GemmPrecision precision) override { precision_ = precision; }
  GemmPrecision gemm_precision() const override { return precision_; }
  Tensor zeros(int64_t rows, int64_t cols) override;
  Tensor empty(int64_t rows, int64_t cols) override;  // no cudaMemsetAsync
  Tensor from_host(int64_t rows, int64_t cols, const float* values) override;
  void to_host(const Tensor& tensor, float* values) override;
  HostStaging& host_staging() override;  // pinned buffers, copies on stream()

  void gemm(Transpose transpose_a, Transpose transpose_b, float alpha, const Tensor& a, const Tensor& b, float beta,
            Tensor& c) override;
  void add_bias(const Tensor& bias, Tensor& y) override;
  void accumulate_bias_grad(const Tensor& dy, Tensor& bias_grad) override;

  void activation_forward(Activation activation, const Tensor& x, Tensor& y) override;
  void bias_activation_forward(Activation activation, const Tensor& bias, Tensor& pre, Tensor& y) override;
  void activation_backward(Activation activation, const Tensor& saved, const Tensor& dy, Tensor& dx) override;

  void layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y, Tensor& mean,
                         Tensor& rstd) override;
  void layernorm_backward_input(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                const Tensor& rstd, Tensor& dx) override;
  void layernorm_accumulate_param_grads(const Tensor& dy, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                        Tensor& gamma_grad, Tensor& beta_grad) override;

  void dropout_forward(const Tensor& x, float p, const RngStream& stream, Tensor& y) override;
  void dropout_backward(const Tensor& dy, float p, const RngStream& stream, Tensor& dx) override;

  void fill(float value, Tensor& x) override;
  void fill_uniform(const RngStream& stream, float low, float high, Tensor& x) override;
  void add(const Tensor& a, const Tensor& b, Tensor& out) override;
  void axpy(float alpha, const Tensor& x, Tensor& y) override;
  void scale(float alpha, Tensor& x) override;
  void copy(const Tensor& source, Tensor& destination) override;
  double sum_of_squares(const Tensor& x) override;

  double mse(const Tensor& pred, const Tensor& target, float grad_scale, Tensor& grad) override;
  double softmax_cross_entropy(const Tensor& logits, const Tensor& target, float grad_scale, Tensor& grad) override;

  void sgd_update(const SgdHyper& hyper, const Tensor& grad, Tensor& velocity, Tensor& param) override;
  void adamw_update(const AdamWHyper& hyper, int64_t step, const Tensor& grad, Tensor& exp_avg, Tensor& exp_avg_sq,
                    Tensor& param) override;
  // A few dozen tensors per launch (kTensorsPerLaunch in optimizer.cu), each ending with its per-tensor bits.
  void sgd_update_many(const SgdHyper& hyper, const std::vector<SgdSlot>& slots) override;
  void adamw_update_many(const AdamWHyper& hyper, int64_t step, const std::vector<AdamWSlot>& slots) override;

 private:
  Tensor allocate(int64_t rows, int64_t cols, bool zero_filled);

  int device_ordinal_;
  GemmPrecision precision_ = GemmPrecision::kFp32;
  cudaStream_t stream_ = nullptr;
  cudaStream_t communication_stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  std::unique_ptr<CudaHostStaging> staging_;  // created on first use
};

// The process-wide CUDA backend: the GPU of this rank's node-local rank (local_rank % device count, see
// core/runtime/placement.h), GEMMs in fp32 until set_gemm_precision.
// Created on first use and intentionally never destroyed: destroying streams after the CUDA runtime has
// shut down at exit fails in ways that cannot be reported. This is what the registry's "cuda" name returns.
CudaBackend& cuda_backend();

}  // namespace sluice::kernels
