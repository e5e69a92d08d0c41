// Inverted dropout with a mask drawn from the counter-based RNG, in chunks so no mask is ever stored (on a block of
// a split field, one row's draws at a time).
#include <algorithm>
#include <vector>

#include "kernels/cpu/cpu_backend.h"

namespace sluice::kernels {
namespace {

constexpr int64_t kChunk = 1024;

// out[i] = in[i] * (kept ? 1/(1-p) : 0); forward and backward are the same masked scaling.
void apply_mask(const float* in, float p, const RngStream& stream, int64_t n, float* out) {
  const float keep_scale = 1.0f / (1.0f - p);
  float uniforms[kChunk];
  for (int64_t start = 0; start < n; start += kChunk) {
    const int64_t count = std::min(kChunk, n - start);
    uniform_floats(stream, static_cast<uint64_t>(start), static_cast<uint64_t>(count), uniforms);
    for (int64_t i = 0; i < count; ++i) {
      out[start + i] = uniforms[i] >= p ? in[start + i] * keep_scale : 0.0f;
    }
  }
}

}  // namespace

void CpuBackend::dropout_forward_impl(const Tensor& x, float p, const RngStream& stream, Tensor& y) {
  apply_mask(x.data(), p, stream, x.size(), y.data());
}

void CpuBackend::dropout_backward_impl(const Tensor& dy, float p, const RngStream& stream, Tensor& dx) {
  apply_mask(dy.data(), p, stream, dy.size(), dx.data());
}

// The same masked scaling as apply_mask, each element's draw the whole field's (block_uniform_floats); samples in
// order, so nothing depends on threads.
void CpuBackend::dropout_block_impl(const Tensor& in, float p, const RngStream& stream, const FieldBlockKey& key,
                                    Tensor& out) {
  const float keep_scale = 1.0f / (1.0f - p);
  const int64_t width = in.cols();
  std::vector<float> uniforms(static_cast<size_t>(width));
  for (int64_t row = 0; row < in.rows(); ++row) {
    block_uniform_floats(stream, key, static_cast<uint64_t>(row), uniforms.data());
    const float* x = in.data() + row * width;
    float* y = out.data() + row * width;
    for (int64_t i = 0; i < width; ++i) y[i] = uniforms[static_cast<size_t>(i)] >= p ? x[i] * keep_scale : 0.0f;
  }
}

}  // namespace sluice::kernels
