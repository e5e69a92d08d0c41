// The host implementation of Backend: GEMM through OpenBLAS (cblas_sgemm) or, for the skinny weight products where
// OpenBLAS's packing dominates, oneDNN (chosen by shape, cpu_gemm.cc); everything else as plain loops over host
// memory; convolutions through oneDNN (cpu_conv.cc); group norm and the per-point layernorm of fields as plain
// loops (cpu_field_norm.cc); the spectral convolution through FFTW (cpu_spectral.cc); multi-head attention as loops
// over OpenBLAS products (cpu_attention.cc). Its definitions are split by job over cpu_*.cc files; the operands
// arrive checked (Backend). Stateless
// apart from oneDNN's per-thread primitive caches and the GEMM precision (fp32, or bf16 through oneDNN), so one
// instance serves the whole process (`cpu_backend()`).
#pragma once

#include <atomic>

#include "kernels/backend.h"

namespace sluice::kernels {

class CpuBackend : public Backend {
 public:
  Device device() const override { return Device::kHost; }
  Tensor zeros(int64_t rows, int64_t cols) override;
  Tensor empty(int64_t rows, int64_t cols) override;
  Tensor from_host(int64_t rows, int64_t cols, const float* values) override;
  void to_host(const Tensor& tensor, float* values) override;
  // fp32 (the default) or bf16 (oneDNN, where the CPU has avx512_bf16: cpu_gemm.cc); tf32, and bf16 on a CPU
  // without it, throw Error(kUnsupported) naming the setting and what is missing, and leave the precision as it was.
  void set_gemm_precision(GemmPrecision precision) override;
  GemmPrecision gemm_precision() const override { return precision_; }

 protected:
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
  void dropout_block_impl(const Tensor& in, float p, const RngStream& stream, const FieldBlockKey& key,
                          Tensor& out) override;

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

  void conv_forward_impl(const ConvGeometry& geometry, const Tensor& x, const Tensor& weight, const Tensor* bias,
                         Tensor& y) override;
  void conv_backward_data_impl(const ConvGeometry& geometry, const Tensor& dy, const Tensor& weight,
                               Tensor& dx) override;
  void conv_accumulate_param_grads_impl(const ConvGeometry& geometry, const Tensor& x, const Tensor& dy,
                                        Tensor& weight_grad, Tensor* bias_grad) override;
  void copy_columns_impl(const Tensor& source, int64_t source_col, Tensor& destination, int64_t destination_col,
                         int64_t count, bool add) override;
  void pad_forward_impl(const PadGeometry& geometry, const Tensor& x, Tensor& y) override;
  void pad_backward_impl(const PadGeometry& geometry, const Tensor& dy, Tensor& dx) override;
  double channel_softmax_cross_entropy_impl(int64_t channels, const Tensor& logits, const Tensor& target,
                                            float grad_scale, Tensor& grad) override;

  void group_norm_forward_impl(const NormGeometry& geometry, const Tensor& x, const Tensor& weight,
                               const Tensor& bias, Tensor& y, Tensor& mean, Tensor& rstd) override;
  void group_norm_backward_input_impl(const NormGeometry& geometry, const Tensor& dy, const Tensor& x,
                                      const Tensor& weight, const Tensor& mean, const Tensor& rstd,
                                      Tensor& dx) override;
  void group_norm_accumulate_param_grads_impl(const NormGeometry& geometry, const Tensor& dy, const Tensor& x,
                                              const Tensor& mean, const Tensor& rstd, Tensor& weight_grad,
                                              Tensor& bias_grad) override;
  // Group norm with given statistics and its tiles' partial sums (cpu_group_norm_tiles.cc).
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
  void pool_forward_impl(const PoolGeometry& geometry, const Tensor& x, Tensor& y) override;
  void pool_backward_impl(const PoolGeometry& geometry, const Tensor& x, const Tensor& dy, Tensor& dx) override;
  void resample_forward_impl(const ResampleGeometry& geometry, const Tensor& x, Tensor& y) override;
  void resample_backward_impl(const ResampleGeometry& geometry, const Tensor& dy, Tensor& dx) override;
  void deconv_forward_impl(const DeconvGeometry& geometry, const Tensor& x, const Tensor& weight, const Tensor* bias,
                           Tensor& y) override;
  void deconv_backward_data_impl(const DeconvGeometry& geometry, const Tensor& dy, const Tensor& weight,
                                 Tensor& dx) override;
  void deconv_accumulate_param_grads_impl(const DeconvGeometry& geometry, const Tensor& x, const Tensor& dy,
                                          Tensor& weight_grad, Tensor* bias_grad) override;
  void spectral_conv_forward_impl(const SpectralGeometry& geometry, const Tensor& x, const Tensor& weight,
                                  Tensor& y) override;
  void spectral_conv_backward_data_impl(const SpectralGeometry& geometry, const Tensor& dy, const Tensor& weight,
                                        Tensor& dx) override;
  void spectral_conv_accumulate_weight_grad_impl(const SpectralGeometry& geometry, const Tensor& x, const Tensor& dy,
                                                 Tensor& weight_grad) override;
  void tokens_to_rows_impl(int64_t dim, int64_t tokens, const Tensor& x, Tensor& y) override;
  void rows_to_tokens_impl(int64_t dim, int64_t tokens, const Tensor& x, Tensor& y) override;
  void gather_columns_impl(const std::vector<int64_t>& source, const Tensor& x, Tensor& y) override;
  void attention_forward_impl(const AttentionGeometry& geometry, const Tensor& qkv, Tensor& out,
                              Tensor& probs) override;
  void attention_backward_impl(const AttentionGeometry& geometry, const Tensor& qkv, const Tensor& probs,
                               const Tensor& dout, Tensor& dqkv) override;

 private:
  // Set before a run's first op (trainer setup); atomic because the process-wide instance serves every trainer in
  // the process, which may run products on other threads meanwhile.
  std::atomic<GemmPrecision> precision_{GemmPrecision::kFp32};
};

// The process-wide CPU backend.
Backend& cpu_backend();

}  // namespace sluice::kernels
