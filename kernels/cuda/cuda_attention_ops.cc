// CudaBackend's token ops (operands checked by Backend): the layout changes and unpatch's gather as tokens.cu's
// index kernels, and multi-head self-attention as the CPU computes it (kernels/cpu/cpu_attention.cc): per sample,
// the heads' products as one strided-batched cuBLAS call each (exact fp32, whatever gemm_precision), the softmax and
// its backward row by row in tokens.cu, attention dropout through the dropout kernel over probs' layout
// [samples][heads · T · T], whose per-sample Philox stream draws element (sample, head, query, key) exactly as the
// CPU's draws_of does, so both drop the same probabilities. Products never span samples, so a sample's bits do not
// depend on its micro-batch; agreement with the CPU is to rounding (cuBLAS's sums and expf differ from OpenBLAS's
// and glibc's).
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/cuda/cublas_gemm.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_launch.h"
#include "kernels/cuda/token_launch.h"

namespace sluice::kernels {
namespace {

// gather_columns' indices in device memory, released on the stream when it goes out of scope.
class DeviceIndices {
 public:
  DeviceIndices(const std::vector<int64_t>& values, cudaStream_t stream) : stream_(stream) {
    const size_t bytes = values.size() * sizeof(int64_t);
    check_cuda(cudaMallocAsync(reinterpret_cast<void**>(&data_), bytes, stream), "cudaMallocAsync (gather_columns)");
    // From pageable memory the copy is staged before the call returns, so `values` may go at once.
    check_cuda(cudaMemcpyAsync(data_, values.data(), bytes, cudaMemcpyHostToDevice, stream),
               "cudaMemcpyAsync (gather_columns indices)");
  }
  ~DeviceIndices() { cudaFreeAsync(data_, stream_); }
  DeviceIndices(const DeviceIndices&) = delete;
  DeviceIndices& operator=(const DeviceIndices&) = delete;
  const int64_t* data() const { return data_; }

 private:
  int64_t* data_ = nullptr;
  cudaStream_t stream_;
};

// One sample's per-head views: q, k, v and dq, dk, dv are [T][head_dim] at column h · head_dim of a row of 3D
// (k and v D and 2D further), out and dout [T][head_dim] in rows of D, the probabilities [T][T] per head. The
// heads are the batch of each product: head h + 1 starts head_dim columns (or T² probabilities) after head h.
struct Heads {
  cublasHandle_t handle;
  int64_t t, d, dim, heads;
  float scale;

  // c_h = alpha · op(a_h) op(b_h) for every head h of one sample.
  void product(Transpose ta, Transpose tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
               int64_t stride_a, const float* b, int64_t ldb, int64_t stride_b, float* c, int64_t ldc,
               int64_t stride_c) const {
    row_major_gemm_strided_batched(handle, ta, tb, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, 0.0f, c, ldc,
                                   stride_c, heads);
  }
};

Heads heads_of(cublasHandle_t handle, const AttentionGeometry& g) {
  return {handle, g.tokens, g.head_dim(), g.dim, g.heads, 1.0f / std::sqrt(static_cast<float>(g.head_dim()))};
}

}  // namespace

void CudaBackend::tokens_to_rows_impl(int64_t dim, int64_t tokens, const Tensor& x, Tensor& y) {
  cuda_launch::tokens_to_rows(x.data(), y.data(), x.rows(), dim, tokens, stream_);
}

void CudaBackend::rows_to_tokens_impl(int64_t dim, int64_t tokens, const Tensor& x, Tensor& y) {
  cuda_launch::rows_to_tokens(x.data(), y.data(), y.rows(), dim, tokens, stream_);
}

void CudaBackend::gather_columns_impl(const std::vector<int64_t>& source, const Tensor& x, Tensor& y) {
  if (y.size() == 0) return;
  const DeviceIndices indices(source, stream_);
  cuda_launch::gather_columns(indices.data(), x.data(), x.cols(), y.data(), y.cols(), y.rows(), stream_);
}

void CudaBackend::attention_forward_impl(const AttentionGeometry& geometry, const Tensor& qkv, Tensor& out,
                                         Tensor& probs) {
  const int64_t samples = probs.rows();
  if (samples == 0) return;
  const Heads h = heads_of(cublas_, geometry);
  const int64_t row = 3 * h.dim, pair = h.t * h.t;
  for (int64_t s = 0; s < samples; ++s) {  // scores = scale q kᵀ
    const float* q = qkv.data() + s * h.t * row;
    h.product(Transpose::kNo, Transpose::kYes, h.t, h.t, h.d, h.scale, q, row, h.d, q + h.dim, row, h.d,
              probs.data() + s * h.heads * pair, h.t, pair);
  }
  cuda_launch::softmax_rows(probs.data(), samples * h.heads * h.t, h.t, stream_);
  const float* used = probs.data();
  Tensor dropped;
  if (geometry.dropout > 0.0f) {
    dropped = empty(probs.rows(), probs.cols());
    cuda_launch::dropout(probs.data(), geometry.dropout, geometry.stream, dropped.data(), dropped.size(), stream_);
    used = dropped.data();
  }
  for (int64_t s = 0; s < samples; ++s) {  // out = p' v
    const float* v = qkv.data() + s * h.t * row + 2 * h.dim;
    h.product(Transpose::kNo, Transpose::kNo, h.t, h.d, h.t, 1.0f, used + s * h.heads * pair, h.t, pair, v, row, h.d,
              out.data() + s * h.t * h.dim, h.dim, h.d);
  }
}

// With p' the dropped probabilities (p without dropout): dv = p'ᵀ do; dp' = do vᵀ, dp = dp' through the mask;
// ds = p ∘ (dp − Σ_j dp·p) per row; dq = scale ds k; dk = scale dsᵀ q (the CPU's head_backward).
void CudaBackend::attention_backward_impl(const AttentionGeometry& geometry, const Tensor& qkv, const Tensor& probs,
                                          const Tensor& dout, Tensor& dqkv) {
  const int64_t samples = probs.rows();
  if (samples == 0) return;
  const Heads h = heads_of(cublas_, geometry);
  const int64_t row = 3 * h.dim, pair = h.t * h.t;
  const float* used = probs.data();
  Tensor dropped;
  if (geometry.dropout > 0.0f) {
    dropped = empty(probs.rows(), probs.cols());
    cuda_launch::dropout(probs.data(), geometry.dropout, geometry.stream, dropped.data(), dropped.size(), stream_);
    used = dropped.data();
  }
  Tensor ds = empty(probs.rows(), probs.cols());
  for (int64_t s = 0; s < samples; ++s) {
    const float* v = qkv.data() + s * h.t * row + 2 * h.dim;
    const float* d_out = dout.data() + s * h.t * h.dim;
    h.product(Transpose::kYes, Transpose::kNo, h.t, h.d, h.t, 1.0f, used + s * h.heads * pair, h.t, pair, d_out,
              h.dim, h.d, dqkv.data() + s * h.t * row + 2 * h.dim, row, h.d);
    h.product(Transpose::kNo, Transpose::kYes, h.t, h.t, h.d, 1.0f, d_out, h.dim, h.d, v, row, h.d,
              ds.data() + s * h.heads * pair, h.t, pair);
  }
  if (geometry.dropout > 0.0f) {
    cuda_launch::dropout(ds.data(), geometry.dropout, geometry.stream, ds.data(), ds.size(), stream_);
  }
  cuda_launch::softmax_backward_rows(probs.data(), ds.data(), samples * h.heads * h.t, h.t, stream_);
  for (int64_t s = 0; s < samples; ++s) {
    const float* q = qkv.data() + s * h.t * row;
    float* dq = dqkv.data() + s * h.t * row;
    const float* d_s = ds.data() + s * h.heads * pair;
    h.product(Transpose::kNo, Transpose::kNo, h.t, h.d, h.t, h.scale, d_s, h.t, pair, q + h.dim, row, h.d, dq, row,
              h.d);
    h.product(Transpose::kYes, Transpose::kNo, h.t, h.d, h.t, h.scale, d_s, h.t, pair, q, row, h.d, dq + h.dim, row,
              h.d);
  }
}

}  // namespace sluice::kernels
