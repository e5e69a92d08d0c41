// CpuBackend's token ops: the transformer's layout changes, the column gather of unpatch, and multi-head
// self-attention as our loops over library products. Attention runs one (sample, head) pair at a time, each pair
// a fixed sequence of products (routed_product.h: OpenBLAS or oneDNN by the shape, held at one thread) on strided views of qkv and
// oneDNN's row softmax and its backward (onednn_softmax.h, one thread, each row on its own), so a pair's bits depend
// on that sample alone: not on the batch, nor on which of the rank's threads computes it. Attention dropout draws each pair's mask from the
// per-sample stream, keyed by (seed, layer, global sample, head, query, key), again in the backward.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/blas_threads.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/onednn_softmax.h"
#include "kernels/cpu/parallel_blocks.h"
#include "kernels/cpu/routed_product.h"
#include "kernels/cpu/transpose_tiles.h"

namespace sluice::kernels {
namespace {

// One (sample, head) pair's views: q, k, v are [T][head_dim] with row stride 3D, o (and do) [T][head_dim] with
// stride D; p is the pair's [T][T] probabilities.
struct HeadViews {
  int64_t tokens, head_dim, qkv_stride, out_stride;
  float scale;
  float dropout;  // 0: none
};

// out[i] = x[i] / (1 − dropout) where the pair's uniform draw u[i] is >= dropout (kept), else 0; T² elements. out may
// be u itself.
void drop(const HeadViews& v, const float* x, const float* u, float* out) {
  const float keep_scale = 1.0f / (1.0f - v.dropout);
  for (int64_t i = 0; i < v.tokens * v.tokens; ++i) out[i] = u[i] >= v.dropout ? x[i] * keep_scale : 0.0f;
}

// c = alpha op(a) op(b) by the library the route picks for the shape, as the backend's gemm does.
void product(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
             const float* b, int64_t ldb, float* c, int64_t ldc) {
  routed_product(Product{ta, tb, m, n, k, alpha, 0.0f, a, lda, b, ldb, c, ldc});
}

// `dropped`: the pair's uniform draws when v.dropout > 0 (overwritten by the dropped probabilities), else null.
void head_forward(const HeadViews& v, const float* q, float* p, float* o, float* dropped) {
  const int64_t t = v.tokens, d = v.head_dim;
  const float* k = q + v.qkv_stride / 3;
  const float* val = q + 2 * (v.qkv_stride / 3);
  product(false, true, t, t, d, v.scale, q, v.qkv_stride, k, v.qkv_stride, p, t);  // scores = scale q kᵀ
  softmax_rows(t, t, p);
  const float* used = p;
  if (dropped != nullptr) {
    drop(v, p, dropped, dropped);
    used = dropped;
  }
  product(false, false, t, d, t, 1.0f, used, t, val, v.qkv_stride, o, v.out_stride);  // o = p v
}

// With dropout p' = the dropped probabilities (head_forward's), else p' = p: dv = p'ᵀ do; dp' = do vᵀ, dp = dp'
// through the mask; ds = p ∘ (dp − Σ_j dp·p) per row; dq = scale ds k; dk = scale dsᵀ q. `scratch` holds 4·T²
// floats: ds, dp, then (with dropout) the pair's draws, filled by the caller, and p'.
void head_backward(const HeadViews& v, const float* q, const float* p, const float* dout, float* dq,
                   float* scratch) {
  const int64_t t = v.tokens, d = v.head_dim, third = v.qkv_stride / 3;
  const float* k = q + third;
  const float* val = q + 2 * third;
  float* dk = dq + third;
  float* dv = dq + 2 * third;
  float* ds = scratch;
  float* dp = ds + t * t;
  const float* draws = ds + 2 * t * t;
  float* dropped = ds + 3 * t * t;
  if (v.dropout > 0.0f) drop(v, p, draws, dropped);
  product(true, false, t, d, t, 1.0f, v.dropout > 0.0f ? dropped : p, t, dout, v.out_stride, dv, v.qkv_stride);
  product(false, true, t, t, d, 1.0f, dout, v.out_stride, val, v.qkv_stride, dp, t);
  if (v.dropout > 0.0f) drop(v, dp, draws, dp);  // dp = dp' through the mask
  softmax_rows_backward(t, t, p, dp, ds);
  product(false, false, t, d, t, v.scale, ds, t, k, v.qkv_stride, dq, v.qkv_stride);
  product(true, false, t, d, t, v.scale, ds, t, q, v.qkv_stride, dk, v.qkv_stride);
}

// The calling thread's scratch of at least `floats`, kept for the thread's next pair: a pair's backward needs
// 2-4 T² floats that it writes before it reads, so a fresh zero-filled vector per pair only cost an allocation and
// a memset of that size each time.
float* thread_scratch(size_t floats) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < floats) buffer.resize(floats);
  return buffer.data();
}

HeadViews views_of(const AttentionGeometry& g) {
  return {g.tokens, g.head_dim(), 3 * g.dim, g.dim, 1.0f / std::sqrt(static_cast<float>(g.head_dim())), g.dropout};
}

// The uniform draws of pair (s, h): elements (head, query, key) of sample s's row of the per-sample stream.
void draws_of(const AttentionGeometry& g, int64_t s, int64_t h, float* out) {
  const uint64_t pair = static_cast<uint64_t>(g.tokens * g.tokens);
  uniform_floats(g.stream, static_cast<uint64_t>(s) * g.stream.row_width + static_cast<uint64_t>(h) * pair, pair,
                 out);
}

// Runs body(sample, head) for every pair over the rank's threads (one pair's work on one thread).
template <typename Body>
void per_head(const AttentionGeometry& g, int64_t samples, Body&& body) {
  const BlasHeldAtOneThread team;
  const double work = 4.0 * static_cast<double>(g.tokens) * static_cast<double>(g.tokens) * g.dim;
  const int threads = threads_for(team.team_threads(), samples, work);
  run_blocks(samples * g.heads, threads, [&](int64_t j) { body(j / g.heads, j % g.heads); });
}

}  // namespace

void CpuBackend::tokens_to_rows_impl(int64_t dim, int64_t tokens, const Tensor& x, Tensor& y) {
  for (int64_t s = 0; s < x.rows(); ++s) transpose_matrix(x.data() + s * dim * tokens, dim, tokens, y.data() + s * dim * tokens);
}

void CpuBackend::rows_to_tokens_impl(int64_t dim, int64_t tokens, const Tensor& x, Tensor& y) {
  for (int64_t s = 0; s < y.rows(); ++s) transpose_matrix(x.data() + s * dim * tokens, tokens, dim, y.data() + s * dim * tokens);
}

void CpuBackend::gather_columns_impl(const std::vector<int64_t>& source, const Tensor& x, Tensor& y) {
  const int64_t cols = y.cols();
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float* in = x.data() + r * x.cols();
    float* out = y.data() + r * cols;
    for (int64_t j = 0; j < cols; ++j) out[j] = in[source[static_cast<size_t>(j)]];
  }
}

void CpuBackend::attention_forward_impl(const AttentionGeometry& geometry, const Tensor& qkv, Tensor& out,
                                        Tensor& probs) {
  const HeadViews v = views_of(geometry);
  const int64_t t = geometry.tokens, d = v.head_dim;
  per_head(geometry, probs.rows(), [&](int64_t s, int64_t h) {
    const float* q = qkv.data() + s * t * v.qkv_stride + h * d;
    float* p = probs.data() + (s * geometry.heads + h) * t * t;
    float* dropped = v.dropout > 0.0f ? thread_scratch(static_cast<size_t>(t * t)) : nullptr;
    if (dropped != nullptr) draws_of(geometry, s, h, dropped);
    head_forward(v, q, p, out.data() + s * t * v.out_stride + h * d, dropped);
  });
}

void CpuBackend::attention_backward_impl(const AttentionGeometry& geometry, const Tensor& qkv, const Tensor& probs,
                                         const Tensor& dout, Tensor& dqkv) {
  const HeadViews v = views_of(geometry);
  const int64_t t = geometry.tokens, d = v.head_dim;
  per_head(geometry, probs.rows(), [&](int64_t s, int64_t h) {
    float* scratch = thread_scratch(static_cast<size_t>((v.dropout > 0.0f ? 4 : 2) * t * t));
    if (v.dropout > 0.0f) draws_of(geometry, s, h, scratch + 2 * t * t);
    head_backward(v, qkv.data() + s * t * v.qkv_stride + h * d, probs.data() + (s * geometry.heads + h) * t * t,
                  dout.data() + s * t * v.out_stride + h * d, dqkv.data() + s * t * v.qkv_stride + h * d, scratch);
  });
}

}  // namespace sluice::kernels
