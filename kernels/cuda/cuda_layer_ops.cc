// CudaBackend's activation, LayerNorm and dropout ops (operands checked by Backend), kernels in the matching .cu
// files.
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_launch.h"

namespace sluice::kernels {
void CudaBackend::activation_forward_impl(Activation activation, const Tensor& x, Tensor& y) {
  cuda_launch::activation_forward(activation, x.data(), y.data(), x.size(), stream_);
}

void CudaBackend::bias_activation_forward_impl(Activation activation, const Tensor& bias, Tensor& pre, Tensor& y) {
  cuda_launch::bias_activation_forward(activation, bias.data(), pre.data(), y.data(), pre.rows(), pre.cols(), stream_);
}

void CudaBackend::activation_backward_impl(Activation activation, const Tensor& saved, const Tensor& dy, Tensor& dx) {
  cuda_launch::activation_backward(activation, saved.data(), dy.data(), dx.data(), saved.size(), stream_);
}

void CudaBackend::layernorm_forward_impl(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y,
                                         Tensor& mean, Tensor& rstd) {
  cuda_launch::layernorm_forward(x.data(), gamma.data(), beta.data(), eps, y.data(), mean.data(), rstd.data(),
                                 x.rows(), x.cols(), stream_);
}

void CudaBackend::layernorm_backward_input_impl(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                                const Tensor& mean, const Tensor& rstd, Tensor& dx) {
  cuda_launch::layernorm_backward_input(dy.data(), x.data(), gamma.data(), mean.data(), rstd.data(), dx.data(),
                                        x.rows(), x.cols(), stream_);
}

void CudaBackend::layernorm_accumulate_param_grads_impl(const Tensor& dy, const Tensor& x, const Tensor& mean,
                                                        const Tensor& rstd, Tensor& gamma_grad, Tensor& beta_grad) {
  cuda_launch::layernorm_accumulate_param_grads(dy.data(), x.data(), mean.data(), rstd.data(), gamma_grad.data(),
                                                beta_grad.data(), x.rows(), x.cols(), stream_);
}

void CudaBackend::dropout_forward_impl(const Tensor& x, float p, const RngStream& stream, Tensor& y) {
  cuda_launch::dropout(x.data(), p, stream, y.data(), x.size(), stream_);
}

void CudaBackend::dropout_backward_impl(const Tensor& dy, float p, const RngStream& stream, Tensor& dx) {
  cuda_launch::dropout(dy.data(), p, stream, dx.data(), dy.size(), stream_);
}

}  // namespace sluice::kernels
