// CudaBackend's activation, LayerNorm and dropout ops: argument checks here, kernels in the matching .cu files.
#include <string>

#include "core/common/error.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_launch.h"
#include "kernels/cuda/device_check.h"

namespace sluice::kernels {
namespace {

using cuda_detail::require_device;
using cuda_detail::require_devices;

void check_probability(const char* op, float p) {
  if (!(p >= 0.0f && p < 1.0f)) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string(op) + ": dropout probability must be in [0, 1), got " + std::to_string(p));
  }
}

}  // namespace

void CudaBackend::activation_forward(Activation activation, const Tensor& x, Tensor& y) {
  require_device("activation_forward", "x", x);
  require_device("activation_forward", "y", y);
  require_same_shape("activation_forward", "y", y, x);
  cuda_launch::activation_forward(activation, x.data(), y.data(), x.size(), stream_);
}

void CudaBackend::bias_activation_forward(Activation activation, const Tensor& bias, Tensor& pre, Tensor& y) {
  require_devices("bias_activation_forward", {{"bias", &bias}, {"pre", &pre}, {"y", &y}});
  require_shape("bias_activation_forward", "bias", bias, 1, pre.cols());
  require_same_shape("bias_activation_forward", "y", y, pre);
  cuda_launch::bias_activation_forward(activation, bias.data(), pre.data(), y.data(), pre.rows(), pre.cols(), stream_);
}

void CudaBackend::activation_backward(Activation activation, const Tensor& saved, const Tensor& dy, Tensor& dx) {
  require_device("activation_backward", "saved", saved);
  require_device("activation_backward", "dy", dy);
  require_device("activation_backward", "dx", dx);
  require_same_shape("activation_backward", "dy", dy, saved);
  require_same_shape("activation_backward", "dx", dx, saved);
  cuda_launch::activation_backward(activation, saved.data(), dy.data(), dx.data(), saved.size(), stream_);
}

void CudaBackend::layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y,
                                    Tensor& mean, Tensor& rstd) {
  const char* op = "layernorm_forward";
  require_devices(op, {{"x", &x}, {"gamma", &gamma}, {"beta", &beta}, {"y", &y}, {"mean", &mean}, {"rstd", &rstd}});
  require_shape(op, "gamma", gamma, 1, x.cols());
  require_shape(op, "beta", beta, 1, x.cols());
  require_same_shape(op, "y", y, x);
  require_shape(op, "mean", mean, x.rows(), 1);
  require_shape(op, "rstd", rstd, x.rows(), 1);
  cuda_launch::layernorm_forward(x.data(), gamma.data(), beta.data(), eps, y.data(), mean.data(), rstd.data(),
                                 x.rows(), x.cols(), stream_);
}

void CudaBackend::layernorm_backward_input(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                           const Tensor& mean, const Tensor& rstd, Tensor& dx) {
  const char* op = "layernorm_backward_input";
  require_devices(op, {{"dy", &dy}, {"x", &x}, {"gamma", &gamma}, {"mean", &mean}, {"rstd", &rstd}, {"dx", &dx}});
  require_same_shape(op, "dy", dy, x);
  require_same_shape(op, "dx", dx, x);
  require_shape(op, "gamma", gamma, 1, x.cols());
  require_shape(op, "mean", mean, x.rows(), 1);
  require_shape(op, "rstd", rstd, x.rows(), 1);
  cuda_launch::layernorm_backward_input(dy.data(), x.data(), gamma.data(), mean.data(), rstd.data(), dx.data(),
                                        x.rows(), x.cols(), stream_);
}

void CudaBackend::layernorm_accumulate_param_grads(const Tensor& dy, const Tensor& x, const Tensor& mean,
                                                   const Tensor& rstd, Tensor& gamma_grad, Tensor& beta_grad) {
  const char* op = "layernorm_accumulate_param_grads";
  require_devices(op, {{"dy", &dy}, {"x", &x}, {"mean", &mean}, {"rstd", &rstd}, {"gamma_grad", &gamma_grad},
                       {"beta_grad", &beta_grad}});
  require_same_shape(op, "dy", dy, x);
  require_shape(op, "mean", mean, x.rows(), 1);
  require_shape(op, "rstd", rstd, x.rows(), 1);
  require_shape(op, "gamma_grad", gamma_grad, 1, x.cols());
  require_shape(op, "beta_grad", beta_grad, 1, x.cols());
  cuda_launch::layernorm_accumulate_param_grads(dy.data(), x.data(), mean.data(), rstd.data(), gamma_grad.data(),
                                                beta_grad.data(), x.rows(), x.cols(), stream_);
}

void CudaBackend::dropout_forward(const Tensor& x, float p, const RngStream& stream, Tensor& y) {
  check_probability("dropout_forward", p);
  require_device("dropout_forward", "x", x);
  require_device("dropout_forward", "y", y);
  require_same_shape("dropout_forward", "y", y, x);
  cuda_launch::dropout(x.data(), p, stream, y.data(), x.size(), stream_);
}

void CudaBackend::dropout_backward(const Tensor& dy, float p, const RngStream& stream, Tensor& dx) {
  check_probability("dropout_backward", p);
  require_device("dropout_backward", "dy", dy);
  require_device("dropout_backward", "dx", dx);
  require_same_shape("dropout_backward", "dx", dx, dy);
  cuda_launch::dropout(dy.data(), p, stream, dx.data(), dy.size(), stream_);
}

}  // namespace sluice::kernels
