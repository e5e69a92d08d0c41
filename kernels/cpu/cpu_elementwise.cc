// Element-wise fills, sums and copies.
#include <algorithm>
#include <vector>

#include "kernels/cpu/cpu_backend.h"

namespace sluice::kernels {

void CpuBackend::fill_impl(float value, Tensor& x) { std::fill(x.data(), x.data() + x.size(), value); }

void CpuBackend::fill_uniform_impl(const RngStream& stream, float low, float high, Tensor& x) {
  std::vector<float> uniforms(static_cast<size_t>(x.size()));
  uniform_floats(stream, 0, uniforms.size(), uniforms.data());
  for (int64_t i = 0; i < x.size(); ++i) x.data()[i] = low + (high - low) * uniforms[static_cast<size_t>(i)];
}

void CpuBackend::add_impl(const Tensor& a, const Tensor& b, Tensor& out) {
  for (int64_t i = 0; i < a.size(); ++i) out.data()[i] = a.data()[i] + b.data()[i];
}

void CpuBackend::axpy_impl(float alpha, const Tensor& x, Tensor& y) {
  for (int64_t i = 0; i < x.size(); ++i) y.data()[i] += alpha * x.data()[i];
}

void CpuBackend::scale_impl(float alpha, Tensor& x) {
  for (int64_t i = 0; i < x.size(); ++i) x.data()[i] *= alpha;
}

void CpuBackend::copy_impl(const Tensor& source, Tensor& destination) {
  std::copy(source.data(), source.data() + source.size(), destination.data());
}

double CpuBackend::sum_of_squares_impl(const Tensor& x) {
  double sum = 0.0;
  for (int64_t i = 0; i < x.size(); ++i) sum += static_cast<double>(x.data()[i]) * x.data()[i];
  return sum;
}

}  // namespace sluice::kernels
