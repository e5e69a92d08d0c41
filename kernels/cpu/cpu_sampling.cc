// CpuBackend's pooling, upsampling and transposed convolution: oneDNN one sample per call
// (kernels/cpu/onednn_sampling.h), shared out over the rank's threads; the transposed convolution's parameter
// gradients as one partial per sample added in sample order, as the convolution's (cpu_conv.cc).
#include <vector>

#include "kernels/cpu/blas_threads.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/onednn_sampling.h"
#include "kernels/cpu/parallel_blocks.h"

namespace sluice::kernels {

namespace {

// Roughly the multiply-adds of one sample: each output element reads a few inputs.
double work_of(int64_t in, int64_t out) { return 4.0 * static_cast<double>(in + out); }

}  // namespace

void CpuBackend::pool_forward_impl(const PoolGeometry& geometry, const Tensor& x, Tensor& y) {
  const BlasHeldAtOneThread team;
  const int64_t in = geometry.in_features(), out = geometry.out_features();
  run_blocks(x.rows(), threads_for(team.team_threads(), x.rows(), work_of(in, out)),
             [&](int64_t n) { onednn_pool_forward(geometry, x.data() + n * in, y.data() + n * out); });
}

void CpuBackend::pool_backward_impl(const PoolGeometry& geometry, const Tensor& x, const Tensor& dy, Tensor& dx) {
  const BlasHeldAtOneThread team;
  const int64_t in = geometry.in_features(), out = geometry.out_features();
  run_blocks(dy.rows(), threads_for(team.team_threads(), dy.rows(), work_of(in, out)), [&](int64_t n) {
    onednn_pool_backward(geometry, x.data() + n * in, dy.data() + n * out, dx.data() + n * in);
  });
}

void CpuBackend::resample_forward_impl(const ResampleGeometry& geometry, const Tensor& x, Tensor& y) {
  const BlasHeldAtOneThread team;
  const int64_t in = geometry.in_features(), out = geometry.out_features();
  run_blocks(x.rows(), threads_for(team.team_threads(), x.rows(), work_of(in, out)),
             [&](int64_t n) { onednn_resample_forward(geometry, x.data() + n * in, y.data() + n * out); });
}

void CpuBackend::resample_backward_impl(const ResampleGeometry& geometry, const Tensor& dy, Tensor& dx) {
  const BlasHeldAtOneThread team;
  const int64_t in = geometry.in_features(), out = geometry.out_features();
  run_blocks(dy.rows(), threads_for(team.team_threads(), dy.rows(), work_of(in, out)),
             [&](int64_t n) { onednn_resample_backward(geometry, dy.data() + n * out, dx.data() + n * in); });
}

void CpuBackend::deconv_forward_impl(const DeconvGeometry& geometry, const Tensor& x, const Tensor& weight,
                                     const Tensor* bias, Tensor& y) {
  const BlasHeldAtOneThread team;
  const int64_t in = geometry.in_features(), out = geometry.out_features();
  const float* b = bias != nullptr ? bias->data() : nullptr;
  run_blocks(x.rows(), threads_for(team.team_threads(), x.rows(), work_of(in, out)), [&](int64_t n) {
    onednn_deconv_forward(geometry, x.data() + n * in, weight.data(), b, y.data() + n * out);
  });
}

void CpuBackend::deconv_backward_data_impl(const DeconvGeometry& geometry, const Tensor& dy, const Tensor& weight,
                                           Tensor& dx) {
  const BlasHeldAtOneThread team;
  const int64_t in = geometry.in_features(), out = geometry.out_features();
  run_blocks(dy.rows(), threads_for(team.team_threads(), dy.rows(), work_of(in, out)), [&](int64_t n) {
    onednn_deconv_backward_data(geometry, dy.data() + n * out, weight.data(), dx.data() + n * in);
  });
}

// One partial per sample, added in sample order: the bits do not depend on which thread computed which sample.
void CpuBackend::deconv_accumulate_param_grads_impl(const DeconvGeometry& geometry, const Tensor& x,
                                                    const Tensor& dy, Tensor& weight_grad, Tensor* bias_grad) {
  const int64_t samples = x.rows();
  if (samples == 0) return;
  const int64_t in = geometry.in_features(), out = geometry.out_features();
  const int64_t weights = weight_grad.size(), biases = bias_grad != nullptr ? bias_grad->size() : 0;
  const int64_t stride = weights + biases;
  std::vector<float> partials(static_cast<size_t>(samples * stride));
  const BlasHeldAtOneThread team;
  run_blocks(samples, threads_for(team.team_threads(), samples, work_of(in, out)), [&](int64_t n) {
    float* partial = partials.data() + n * stride;
    onednn_deconv_backward_weights(geometry, x.data() + n * in, dy.data() + n * out, partial,
                                   bias_grad != nullptr ? partial + weights : nullptr);
  });
  for (int64_t n = 0; n < samples; ++n) {
    const float* partial = partials.data() + n * stride;
    float* w = weight_grad.data();
    for (int64_t i = 0; i < weights; ++i) w[i] += partial[i];
    if (bias_grad != nullptr) {
      float* b = bias_grad->data();
      for (int64_t i = 0; i < biases; ++i) b[i] += partial[weights + i];
    }
  }
}

}  // namespace sluice::kernels
