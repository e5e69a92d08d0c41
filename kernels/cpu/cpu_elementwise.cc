// Element-wise fills, sums and copies.
#include <algorithm>
#include <vector>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/shape_check.h"

namespace sluice::kernels {

void CpuBackend::fill(float value, Tensor& x) { std::fill(x.data(), x.data() + x.size(), value); }

void CpuBackend::fill_uniform(const RngStream& stream, float low, float high, Tensor& x) {
  std::vector<float> uniforms(static_cast<size_t>(x.size()));
  uniform_floats(stream, 0, uniforms.size(), uniforms.data());
  for (int64_t i = 0; i < x.size(); ++i) x.data()[i] = low + (high - low) * uniforms[static_cast<size_t>(i)];
}

void CpuBackend::add(const Tensor& a, const Tensor& b, Tensor& out) {
  cpu_detail::require_same_shape("add", "b", b, a);
  cpu_detail::require_same_shape("add", "out", out, a);
  for (int64_t i = 0; i < a.size(); ++i) out.data()[i] = a.data()[i] + b.data()[i];
}

void CpuBackend::axpy(float alpha, const Tensor& x, Tensor& y) {
  cpu_detail::require_same_shape("axpy", "y", y, x);
  for (int64_t i = 0; i < x.size(); ++i) y.data()[i] += alpha * x.data()[i];
}

void CpuBackend::scale(float alpha, Tensor& x) {
  for (int64_t i = 0; i < x.size(); ++i) x.data()[i] *= alpha;
}

void CpuBackend::copy(const Tensor& source, Tensor& destination) {
  cpu_detail::require_same_shape("copy", "destination", destination, source);
  std::copy(source.data(), source.data() + source.size(), destination.data());
}

double CpuBackend::sum_of_squares(const Tensor& x) {
  double sum = 0.0;
  for (int64_t i = 0; i < x.size(); ++i) sum += static_cast<double>(x.data()[i]) * x.data()[i];
  return sum;
}

}  // namespace sluice::kernels
