// CudaBackend's normalizations of fields (operands checked by Backend): group norm and layernorm over the channels
// at each point, both the CPU's "sets" (field_launch.h's NormSets) run by field_norm.cu, and group norm in pieces
// for statistics per tile (kernels/tiled_norm.h); and the softmax
// cross-entropy at every point of a field (field_loss.cu).
#include <vector>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/field_launch.h"

namespace sluice::kernels {
namespace {

cuda_launch::NormSets group_sets(const NormGeometry& g) {
  cuda_launch::NormSets t;
  t.sets = g.groups;
  t.size = g.channels / g.groups * g.points;
  t.set_stride = t.size;
  t.element_stride = 1;
  t.points = g.points;
  t.features = g.features();
  t.eps = g.eps;
  return t;
}

cuda_launch::NormSets channel_sets(const NormGeometry& g) {
  cuda_launch::NormSets t;
  t.sets = g.points;
  t.size = g.channels;
  t.set_stride = 1;
  t.element_stride = g.points;
  t.points = g.points;
  t.features = g.features();
  t.eps = g.eps;
  t.per_point = true;
  return t;
}

}  // namespace

void CudaBackend::group_norm_forward_impl(const NormGeometry& geometry, const Tensor& x, const Tensor& weight,
                                          const Tensor& bias, Tensor& y, Tensor& mean, Tensor& rstd) {
  cuda_launch::norm_forward(group_sets(geometry), x.rows(), x.data(), weight.data(), bias.data(), y.data(),
                            mean.data(), rstd.data(), stream_);
}

void CudaBackend::group_norm_backward_input_impl(const NormGeometry& geometry, const Tensor& dy, const Tensor& x,
                                                 const Tensor& weight, const Tensor& mean, const Tensor& rstd,
                                                 Tensor& dx) {
  cuda_launch::norm_backward_input(group_sets(geometry), x.rows(), dy.data(), x.data(), weight.data(), mean.data(),
                                   rstd.data(), dx.data(), stream_);
}

void CudaBackend::group_norm_accumulate_param_grads_impl(const NormGeometry& geometry, const Tensor& dy,
                                                         const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                                         Tensor& weight_grad, Tensor& bias_grad) {
  cuda_launch::norm_param_grads(group_sets(geometry), x.rows(), geometry.channels, dy.data(), x.data(), mean.data(),
                                rstd.data(), weight_grad.data(), bias_grad.data(), stream_);
}

std::vector<double> CudaBackend::group_norm_partial_sums_impl(const NormGeometry& geometry, const Tensor& x) {
  std::vector<double> sums(static_cast<size_t>(x.rows() * geometry.groups * 2));
  cuda_launch::group_norm_partial_sums(group_sets(geometry), x.rows(), x.data(), sums.data(), stream_);
  return sums;
}

void CudaBackend::group_norm_normalize_impl(const NormGeometry& geometry, const Tensor& x, const Tensor& weight,
                                            const Tensor& bias, const Tensor& mean, const Tensor& rstd, Tensor& y) {
  cuda_launch::group_norm_normalize(group_sets(geometry), x.rows(), x.data(), weight.data(), bias.data(),
                                    mean.data(), rstd.data(), y.data(), stream_);
}

std::vector<double> CudaBackend::group_norm_backward_partial_sums_impl(const NormGeometry& geometry, const Tensor& dy,
                                                                       const Tensor& x, const Tensor& weight,
                                                                       const Tensor& mean, const Tensor& rstd) {
  std::vector<double> sums(static_cast<size_t>(x.rows() * geometry.groups * 2));
  cuda_launch::group_norm_backward_partial_sums(group_sets(geometry), x.rows(), dy.data(), x.data(), weight.data(),
                                                mean.data(), rstd.data(), sums.data(), stream_);
  return sums;
}

void CudaBackend::group_norm_backward_with_sums_impl(const NormGeometry& geometry, const Tensor& dy,
                                                     const Tensor& x, const Tensor& weight, const Tensor& mean,
                                                     const Tensor& rstd, const Tensor& mean_g,
                                                     const Tensor& mean_g_xhat, Tensor& dx) {
  cuda_launch::group_norm_backward_with_sums(group_sets(geometry), x.rows(), dy.data(), x.data(), weight.data(),
                                             mean.data(), rstd.data(), mean_g.data(), mean_g_xhat.data(), dx.data(),
                                             stream_);
}

void CudaBackend::channel_layernorm_forward_impl(const NormGeometry& geometry, const Tensor& x,
                                                 const Tensor& weight, const Tensor& bias, Tensor& y, Tensor& mean,
                                                 Tensor& rstd) {
  cuda_launch::norm_forward(channel_sets(geometry), x.rows(), x.data(), weight.data(), bias.data(), y.data(),
                            mean.data(), rstd.data(), stream_);
}

void CudaBackend::channel_layernorm_backward_input_impl(const NormGeometry& geometry, const Tensor& dy,
                                                        const Tensor& x, const Tensor& weight, const Tensor& mean,
                                                        const Tensor& rstd, Tensor& dx) {
  cuda_launch::norm_backward_input(channel_sets(geometry), x.rows(), dy.data(), x.data(), weight.data(),
                                   mean.data(), rstd.data(), dx.data(), stream_);
}

void CudaBackend::channel_layernorm_accumulate_param_grads_impl(const NormGeometry& geometry, const Tensor& dy,
                                                                const Tensor& x, const Tensor& mean,
                                                                const Tensor& rstd, Tensor& weight_grad,
                                                                Tensor& bias_grad) {
  cuda_launch::norm_param_grads(channel_sets(geometry), x.rows(), geometry.channels, dy.data(), x.data(),
                                mean.data(), rstd.data(), weight_grad.data(), bias_grad.data(), stream_);
}

double CudaBackend::channel_softmax_cross_entropy_impl(int64_t channels, const Tensor& logits, const Tensor& target,
                                                       float grad_scale, Tensor& grad) {
  return cuda_launch::channel_softmax_cross_entropy(logits.data(), target.data(), grad_scale, grad.data(),
                                                    logits.rows(), channels, logits.cols() / channels, stream_);
}

}  // namespace sluice::kernels
