// Backend on one NVIDIA GPU: device tensors from a stream-ordered pool (CudaBuffer), GEMM through cuBLAS,
// convolutions and pooling through cuDNN (deterministic algorithms only), the spectral convolution's transforms
// through cuFFT, everything else through the kernels in the *.cu files. All work is queued on one compute stream in call order, so the Backend's sequential semantics
// hold without host synchronisation; only ops returning a value to the host (to_host, sum_of_squares, the losses)
// wait for the stream.
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

class CudnnContext;  // kernels/cuda/cudnn_context.h
class CufftPlans;    // kernels/cuda/cufft_plans.h

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

 protected:
  // A host tensor passed to a CUDA op would be dereferenced on the device: rejected before the launch.
  void require_on_device(const char* op, const char* operand, const Tensor& tensor) const override;

  void gemm_impl(Transpose transpose_a, Transpose transpose_b, float alpha, const Tensor& a, const Tensor& b,
                 float beta, Tensor& c) override;
  void add_bias_impl(const Tensor& bias, Tensor& y) override;
  void accumulate_bias_grad_impl(const Tensor& dy, Tensor& bias_grad) override;

  void activation_forward_impl(Activation activation, const Tensor& x, Tensor& y) override;
  void bias_activation_forward_impl(Activation activation, const Tensor& bias, Tensor& pre, Tensor& y) override;
  void activation_backward_impl(Activation activation, const Tensor& saved, const Tensor& dy, Tensor& dx) override;

  void layernorm_forward_impl(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y,
                              Tensor& mean, Tensor& rstd) override;
  void layernorm_backward_input_impl(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                     const Tensor& rstd, Tensor& dx) override;
  void layernorm_accumulate_param_grads_impl(const Tensor& dy, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                             Tensor& gamma_grad, Tensor& beta_grad) override;

  void dropout_forward_impl(const Tensor& x, float p, const RngStream& stream, Tensor& y) override;
  void dropout_backward_impl(const Tensor& dy, float p, const RngStream& stream, Tensor& dx) override;

  void fill_impl(float value, Tensor& x) override;
  void fill_uniform_impl(const RngStream& stream, float low, float high, Tensor& x) override;
  void add_impl(const Tensor& a, const Tensor& b, Tensor& out) override;
  void axpy_impl(float alpha, const Tensor& x, Tensor& y) override;
  void scale_impl(float alpha, Tensor& x) override;
  void copy_impl(const Tensor& source, Tensor& destination) override;
  double sum_of_squares_impl(const Tensor& x) override;

  double mse_impl(const Tensor& pred, const Tensor& target, float grad_scale, Tensor& grad) override;
  double softmax_cross_entropy_impl(const Tensor& logits, const Tensor& target, float grad_scale,
                                    Tensor& grad) override;

  void sgd_update_impl(const SgdHyper& hyper, const Tensor& grad, Tensor& velocity, Tensor& param) override;
  void adamw_update_impl(const AdamWHyper& hyper, int64_t step, const Tensor& grad, Tensor& exp_avg, Tensor& exp_avg_sq,
                         Tensor& param) override;
  // A few dozen tensors per launch (kTensorsPerLaunch in optimizer.cu), each ending with its per-tensor bits.
  void sgd_update_many_impl(const SgdHyper& hyper, const std::vector<SgdSlot>& slots) override;
  void adamw_update_many_impl(const AdamWHyper& hyper, int64_t step, const std::vector<AdamWSlot>& slots) override;

  // Field ops (cuda_field_ops.cc): convolutions and pooling through cuDNN with deterministic algorithms chosen by
  // heuristics (kernels/cuda/cudnn_conv.h); column blocks and periodic/reflect padding through field_index.cu,
  // upsampling through resample.cu, the field norms and the per-point cross-entropy below: every field op.
  void conv_forward_impl(const ConvGeometry& geometry, const Tensor& x, const Tensor& weight, const Tensor* bias,
                         Tensor& y) override;
  void conv_backward_data_impl(const ConvGeometry& geometry, const Tensor& dy, const Tensor& weight,
                               Tensor& dx) override;
  void conv_accumulate_param_grads_impl(const ConvGeometry& geometry, const Tensor& x, const Tensor& dy,
                                        Tensor& weight_grad, Tensor* bias_grad) override;
  void deconv_forward_impl(const DeconvGeometry& geometry, const Tensor& x, const Tensor& weight, const Tensor* bias,
                           Tensor& y) override;
  void deconv_backward_data_impl(const DeconvGeometry& geometry, const Tensor& dy, const Tensor& weight,
                                 Tensor& dx) override;
  void deconv_accumulate_param_grads_impl(const DeconvGeometry& geometry, const Tensor& x, const Tensor& dy,
                                          Tensor& weight_grad, Tensor* bias_grad) override;
  void pool_forward_impl(const PoolGeometry& geometry, const Tensor& x, Tensor& y) override;
  void pool_backward_impl(const PoolGeometry& geometry, const Tensor& x, const Tensor& dy, Tensor& dx) override;
  void copy_columns_impl(const Tensor& source, int64_t source_col, Tensor& destination, int64_t destination_col,
                         int64_t count, bool add) override;
  void pad_forward_impl(const PadGeometry& geometry, const Tensor& x, Tensor& y) override;
  void pad_backward_impl(const PadGeometry& geometry, const Tensor& dy, Tensor& dx) override;
  void resample_forward_impl(const ResampleGeometry& geometry, const Tensor& x, Tensor& y) override;
  void resample_backward_impl(const ResampleGeometry& geometry, const Tensor& dy, Tensor& dx) override;
  // The softmax cross-entropy at every point of a field (field_loss.cu).
  double channel_softmax_cross_entropy_impl(int64_t channels, const Tensor& logits, const Tensor& target,
                                            float grad_scale, Tensor& grad) override;
  // Group norm and layernorm over channels (cuda_field_norm_ops.cc, field_norm.cu).
  void group_norm_forward_impl(const NormGeometry& geometry, const Tensor& x, const Tensor& weight,
                               const Tensor& bias, Tensor& y, Tensor& mean, Tensor& rstd) override;
  void group_norm_backward_input_impl(const NormGeometry& geometry, const Tensor& dy, const Tensor& x,
                                      const Tensor& weight, const Tensor& mean, const Tensor& rstd,
                                      Tensor& dx) override;
  void group_norm_accumulate_param_grads_impl(const NormGeometry& geometry, const Tensor& dy, const Tensor& x,
                                              const Tensor& mean, const Tensor& rstd, Tensor& weight_grad,
                                              Tensor& bias_grad) override;
  // Group norm with given statistics and its tiles' partial sums (cuda_field_norm_ops.cc, field_norm.cu).
  std::vector<double> group_norm_partial_sums_impl(const NormGeometry& geometry, const Tensor& x) override;
  void group_norm_normalize_impl(const NormGeometry& geometry, const Tensor& x, const Tensor& weight,
                                 const Tensor& bias, const Tensor& mean, const Tensor& rstd, Tensor& y) override;
  std::vector<double> group_norm_backward_partial_sums_impl(const NormGeometry& geometry, const Tensor& dy,
                                                            const Tensor& x, const Tensor& weight,
                                                            const Tensor& mean, const Tensor& rstd) override;
  void group_norm_backward_with_sums_impl(const NormGeometry& geometry, const Tensor& dy, const Tensor& x,
                                          const Tensor& weight, const Tensor& mean, const Tensor& rstd,
                                          const Tensor& mean_g, const Tensor& mean_g_xhat, Tensor& dx) override;
  void channel_layernorm_forward_impl(const NormGeometry& geometry, const Tensor& x, const Tensor& weight,
                                      const Tensor& bias, Tensor& y, Tensor& mean, Tensor& rstd) override;
  void channel_layernorm_backward_input_impl(const NormGeometry& geometry, const Tensor& dy, const Tensor& x,
                                             const Tensor& weight, const Tensor& mean, const Tensor& rstd,
                                             Tensor& dx) override;
  void channel_layernorm_accumulate_param_grads_impl(const NormGeometry& geometry, const Tensor& dy,
                                                     const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                                     Tensor& weight_grad, Tensor& bias_grad) override;
  // The spectral convolution through cuFFT and spectral.cu (cuda_spectral_ops.cc).
  void spectral_conv_forward_impl(const SpectralGeometry& geometry, const Tensor& x, const Tensor& weight,
                                  Tensor& y) override;
  void spectral_conv_backward_data_impl(const SpectralGeometry& geometry, const Tensor& dy, const Tensor& weight,
                                        Tensor& dx) override;
  void spectral_conv_accumulate_weight_grad_impl(const SpectralGeometry& geometry, const Tensor& x, const Tensor& dy,
                                                 Tensor& weight_grad) override;
  // Token ops: layout changes and gather in tokens.cu, attention through cuBLAS and tokens.cu
  // (cuda_attention_ops.cc).
  void tokens_to_rows_impl(int64_t dim, int64_t tokens, const Tensor& x, Tensor& y) override;
  void rows_to_tokens_impl(int64_t dim, int64_t tokens, const Tensor& x, Tensor& y) override;
  void gather_columns_impl(const std::vector<int64_t>& source, const Tensor& x, Tensor& y) override;
  void attention_forward_impl(const AttentionGeometry& geometry, const Tensor& qkv, Tensor& out,
                              Tensor& probs) override;
  void attention_backward_impl(const AttentionGeometry& geometry, const Tensor& qkv, const Tensor& probs,
                               const Tensor& dout, Tensor& dqkv) override;

 private:
  Tensor allocate(int64_t rows, int64_t cols, bool zero_filled);
  CudnnContext& cudnn();  // made on first use, bound to stream_
  CufftPlans& cufft();    // made on first use, its plans bound to stream_
  Tensor explicitly_padded(const ConvGeometry& geometry, const Tensor& x);

  int device_ordinal_;
  GemmPrecision precision_ = GemmPrecision::kFp32;
  cudaStream_t stream_ = nullptr;
  cudaStream_t communication_stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  std::unique_ptr<CudaHostStaging> staging_;  // created on first use
  std::unique_ptr<CudnnContext> cudnn_;       // created on the first field op
  std::unique_ptr<CufftPlans> cufft_;         // created on the first spectral op
};

// The process-wide CUDA backend, on GPU device_for_local_rank(local_rank, device count) (kernels/device_request.h;
// local_rank is the rank's place among its node's GPU-driving ranks, which the caller passes in), GEMMs in fp32
// until set_gemm_precision. The first call picks the GPU: the backend is made once per process, and later calls
// return it whatever their local_rank. Intentionally never destroyed: destroying streams after the CUDA runtime
// has shut down at exit fails in ways that cannot be reported. This is what the registry's "cuda" name returns.
CudaBackend& cuda_backend(int local_rank);

}  // namespace sluice::kernels
