// Inverted dropout with a mask drawn from the counter-based RNG, in chunks so no mask is ever stored.
#include <algorithm>
#include <string>

#include "core/common/error.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/shape_check.h"

namespace sluice::kernels {
namespace {

constexpr int64_t kChunk = 1024;

void check_probability(const char* op, float p) {
  if (!(p >= 0.0f && p < 1.0f)) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string(op) + ": dropout probability must be in [0, 1), got " + std::to_string(p));
  }
}

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

void CpuBackend::dropout_forward(const Tensor& x, float p, const RngStream& stream, Tensor& y) {
  check_probability("dropout_forward", p);
  cpu_detail::require_same_shape("dropout_forward", "y", y, x);
  apply_mask(x.data(), p, stream, x.size(), y.data());
}

void CpuBackend::dropout_backward(const Tensor& dy, float p, const RngStream& stream, Tensor& dx) {
  check_probability("dropout_backward", p);
  cpu_detail::require_same_shape("dropout_backward", "dx", dx, dy);
  apply_mask(dy.data(), p, stream, dy.size(), dx.data());
}

}  // namespace sluice::kernels
