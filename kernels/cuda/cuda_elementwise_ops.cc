// CudaBackend's fills, element-wise arithmetic and bias ops (operands checked by Backend), arithmetic in
// elementwise.cu.
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_launch.h"

namespace sluice::kernels {

void CudaBackend::add_bias_impl(const Tensor& bias, Tensor& y) {
  cuda_launch::add_bias(bias.data(), y.data(), y.rows(), y.cols(), stream_);
}

void CudaBackend::accumulate_bias_grad_impl(const Tensor& dy, Tensor& bias_grad) {
  cuda_launch::accumulate_bias_grad(dy.data(), bias_grad.data(), dy.rows(), dy.cols(), stream_);
}

void CudaBackend::fill_impl(float value, Tensor& x) { cuda_launch::fill(value, x.data(), x.size(), stream_); }

void CudaBackend::fill_uniform_impl(const RngStream& stream, float low, float high, Tensor& x) {
  cuda_launch::fill_uniform(stream, low, high, x.data(), x.size(), stream_);
}

void CudaBackend::add_impl(const Tensor& a, const Tensor& b, Tensor& out) {
  cuda_launch::add(a.data(), b.data(), out.data(), a.size(), stream_);
}

void CudaBackend::axpy_impl(float alpha, const Tensor& x, Tensor& y) {
  cuda_launch::axpy(alpha, x.data(), y.data(), x.size(), stream_);
}

void CudaBackend::scale_impl(float alpha, Tensor& x) { cuda_launch::scale(alpha, x.data(), x.size(), stream_); }

void CudaBackend::copy_impl(const Tensor& source, Tensor& destination) {
  if (source.empty()) return;
  check_cuda(cudaMemcpyAsync(destination.data(), source.data(), source.bytes(), cudaMemcpyDeviceToDevice, stream_),
             "cudaMemcpyAsync (copy)");
}

double CudaBackend::sum_of_squares_impl(const Tensor& x) {
  return cuda_launch::sum_of_squares(x.data(), x.size(), stream_);
}

}  // namespace sluice::kernels
