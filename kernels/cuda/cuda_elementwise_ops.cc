// CudaBackend's fills, element-wise arithmetic and bias ops: argument checks here, arithmetic in elementwise.cu.
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_launch.h"
#include "kernels/cuda/device_check.h"

namespace sluice::kernels {

using cuda_detail::require_device;

void CudaBackend::add_bias(const Tensor& bias, Tensor& y) {
  require_device("add_bias", "bias", bias);
  require_device("add_bias", "y", y);
  require_shape("add_bias", "bias", bias, 1, y.cols());
  cuda_launch::add_bias(bias.data(), y.data(), y.rows(), y.cols(), stream_);
}

void CudaBackend::accumulate_bias_grad(const Tensor& dy, Tensor& bias_grad) {
  require_device("accumulate_bias_grad", "dy", dy);
  require_device("accumulate_bias_grad", "bias_grad", bias_grad);
  require_shape("accumulate_bias_grad", "bias_grad", bias_grad, 1, dy.cols());
  cuda_launch::accumulate_bias_grad(dy.data(), bias_grad.data(), dy.rows(), dy.cols(), stream_);
}

void CudaBackend::fill(float value, Tensor& x) {
  require_device("fill", "x", x);
  cuda_launch::fill(value, x.data(), x.size(), stream_);
}

void CudaBackend::fill_uniform(const RngStream& stream, float low, float high, Tensor& x) {
  require_device("fill_uniform", "x", x);
  cuda_launch::fill_uniform(stream, low, high, x.data(), x.size(), stream_);
}

void CudaBackend::add(const Tensor& a, const Tensor& b, Tensor& out) {
  require_device("add", "a", a);
  require_device("add", "b", b);
  require_device("add", "out", out);
  require_same_shape("add", "b", b, a);
  require_same_shape("add", "out", out, a);
  cuda_launch::add(a.data(), b.data(), out.data(), a.size(), stream_);
}

void CudaBackend::axpy(float alpha, const Tensor& x, Tensor& y) {
  require_device("axpy", "x", x);
  require_device("axpy", "y", y);
  require_same_shape("axpy", "y", y, x);
  cuda_launch::axpy(alpha, x.data(), y.data(), x.size(), stream_);
}

void CudaBackend::scale(float alpha, Tensor& x) {
  require_device("scale", "x", x);
  cuda_launch::scale(alpha, x.data(), x.size(), stream_);
}

void CudaBackend::copy(const Tensor& source, Tensor& destination) {
  require_device("copy", "source", source);
  require_device("copy", "destination", destination);
  require_same_shape("copy", "destination", destination, source);
  if (source.empty()) return;
  check_cuda(cudaMemcpyAsync(destination.data(), source.data(), source.bytes(), cudaMemcpyDeviceToDevice, stream_),
             "cudaMemcpyAsync (copy)");
}

double CudaBackend::sum_of_squares(const Tensor& x) {
  require_device("sum_of_squares", "x", x);
  return cuda_launch::sum_of_squares(x.data(), x.size(), stream_);
}

}  // namespace sluice::kernels
