// CudaBackend's operator and token ops (cuFFT spectral convolution; the token layouts, unpatch's gather and
// multi-head attention through cuBLAS) against the CpuBackend's (FFTW, OpenBLAS) on the same random inputs: 1-D,
// 2-D and 3-D spectral geometries (odd and even last extents, the Nyquist mode kept, a dimension kept whole),
// attention with and without dropout; the weight gradient must ADD to what it holds and dx/dqkv be overwritten.
// Then the GPU's own rules: a sample alone gives the bits it has in a batch (the weight gradient added sample by
// sample gives the batch's bits), the dropout mask follows the global sample, and a fresh backend (new plans, new
// cuBLAS handle) repeats every bit. Skips with the reason when there is no GPU (fails with SLUICE_REQUIRE_CUDA set).
// This file was written on a machine without a GPU: nothing here has run on one yet.
//
// Tolerances (relative to the tensor's scale, relative_max_error):
// - spectral ops 5e-5: cuFFT's and FFTW's algorithms round differently (each transform ~1e-7 · log2 n of the
//   scale), and a forward op chains two transforms and the channel sum; a wrong mode index, a twin factor c missed
//   or a gradient that overwrites instead of adding is off by O(1) of the scale.
// - attention 1e-5: the products are exact fp32 on both (sums in another order), the softmax's exp is expf on the
//   GPU and glibc's on the CPU (an ulp or two); a wrong head stride or a different dropout mask is off by O(1).
// - token layouts and the gather: bit-identical (copies).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/rng.h"
#include "tests/cuda/cuda_op_test_support.h"
#include "tests/cuda/cuda_test_support.h"

namespace sluice::kernels {
namespace {

using sluice::testing::download;
using sluice::testing::Outputs;
using sluice::testing::random_values;
using sluice::testing::relative_max_error;

constexpr double kSpectralTolerance = 5e-5;
constexpr double kAttentionTolerance = 1e-5;
constexpr int64_t kSamples = 3;

void expect_close(const Outputs& cpu, const Outputs& gpu, double tolerance, const std::string& what) {
  ASSERT_EQ(cpu.values.size(), gpu.values.size()) << what;
  for (size_t i = 0; i < cpu.values.size(); ++i) {
    const double error = relative_max_error(cpu.values[i], gpu.values[i]);
    EXPECT_LE(error, tolerance) << what << ": " << cpu.names[i];
    std::printf("[operator-ops] %s: %s relative %.3e (limit %.0e)\n", what.c_str(), cpu.names[i].c_str(), error,
                tolerance);
  }
}

void expect_identical(const std::vector<float>& a, const std::vector<float>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << what;
}

void expect_identical(const Outputs& first, const Outputs& second, const std::string& what) {
  ASSERT_EQ(first.values.size(), second.values.size()) << what;
  for (size_t i = 0; i < first.values.size(); ++i) {
    expect_identical(first.values[i], second.values[i], what + ": " + first.names[i]);
  }
}

// A slice [first, first + count) of rows of a host array of rows of `width`.
std::vector<float> rows_of(const std::vector<float>& values, int64_t width, int64_t first, int64_t count) {
  return std::vector<float>(values.begin() + first * width, values.begin() + (first + count) * width);
}

// in, out channels, extents, modes: 1-D even and odd (m = n/2 + 1, the most the last dimension keeps), 2-D with the
// Nyquist mode of an even last extent kept, 3-D with a dimension kept whole (2·m = n) and an odd last extent.
std::vector<SpectralGeometry> spectral_cases() {
  return {{2, 3, {8}, {3}}, {3, 2, {9}, {5}}, {2, 3, {8, 6}, {2, 4}}, {2, 2, {6, 4, 5}, {3, 1, 2}},
          {3, 3, {16, 16}, {4, 4}}};
}

struct SpectralInputs {
  std::vector<float> x, weight, dy, weight_grad, junk;
};

SpectralInputs spectral_inputs(const SpectralGeometry& g, int64_t samples, unsigned seed) {
  return {random_values(samples * g.in_features(), seed), random_values(g.in_channels * g.weight_cols(), seed + 1),
          random_values(samples * g.out_features(), seed + 2), random_values(g.in_channels * g.weight_cols(), seed + 3),
          random_values(samples * std::max(g.in_features(), g.out_features()), seed + 4)};
}

// Forward, backward data (dx starts as junk: it must be overwritten) and the weight gradient added to a nonzero
// start, for the samples [first, first + count) of `in`.
Outputs run_spectral(Backend& b, const SpectralGeometry& g, const SpectralInputs& in, int64_t first, int64_t count) {
  const Tensor x = b.from_host(count, g.in_features(), rows_of(in.x, g.in_features(), first, count).data());
  const Tensor dy = b.from_host(count, g.out_features(), rows_of(in.dy, g.out_features(), first, count).data());
  const Tensor weight = b.from_host(g.in_channels, g.weight_cols(), in.weight.data());
  Tensor weight_grad = b.from_host(g.in_channels, g.weight_cols(), in.weight_grad.data());
  Tensor y = b.from_host(count, g.out_features(), in.junk.data());
  Tensor dx = b.from_host(count, g.in_features(), in.junk.data());
  b.spectral_conv_forward(g, x, weight, y);
  b.spectral_conv_backward_data(g, dy, weight, dx);
  b.spectral_conv_accumulate_weight_grad(g, x, dy, weight_grad);
  return download(b, {{"y", &y}, {"dx", &dx}, {"weight_grad", &weight_grad}});
}

std::vector<AttentionGeometry> attention_cases() {
  // tokens, dim, heads (dropout set by the tests): 2 heads of 3, one head, 4 heads of 8 over 16 tokens.
  return {{5, 6, 2}, {7, 8, 1}, {16, 32, 4}};
}

AttentionGeometry with_dropout(AttentionGeometry g, float p, uint64_t first_sample) {
  g.dropout = p;
  g.stream = dropout_stream(7, 3, first_sample, g.heads * g.tokens * g.tokens);
  return g;
}

struct AttentionInputs {
  std::vector<float> qkv, dout, junk;
};

AttentionInputs attention_inputs(const AttentionGeometry& g, int64_t samples, unsigned seed) {
  std::vector<float> qkv = random_values(samples * g.tokens * 3 * g.dim, seed);
  for (float& v : qkv) v *= 2.0f;  // scores of a few units: a softmax that is neither flat nor one-hot
  return {qkv, random_values(samples * g.tokens * g.dim, seed + 1),
          random_values(samples * g.tokens * 3 * g.dim, seed + 2)};
}

// Attention forward and backward of the samples [first, first + count) (dqkv starts as junk).
Outputs run_attention(Backend& b, const AttentionGeometry& g, const AttentionInputs& in, int64_t first,
                      int64_t count) {
  const int64_t rows = count * g.tokens;
  const Tensor qkv = b.from_host(rows, 3 * g.dim, rows_of(in.qkv, g.tokens * 3 * g.dim, first, count).data());
  const Tensor dout = b.from_host(rows, g.dim, rows_of(in.dout, g.tokens * g.dim, first, count).data());
  Tensor out = b.from_host(rows, g.dim, in.junk.data());
  Tensor probs = b.from_host(count, g.heads * g.tokens * g.tokens, in.junk.data());
  Tensor dqkv = b.from_host(rows, 3 * g.dim, in.junk.data());
  b.attention_forward(g, qkv, out, probs);
  b.attention_backward(g, qkv, probs, dout, dqkv);
  return download(b, {{"out", &out}, {"probs", &probs}, {"dqkv", &dqkv}});
}

class CudaOperatorOps : public testing::CpuAndCudaBackends {};

TEST_F(CudaOperatorOps, SpectralConvolutionMatchesTheCpuIn1d2d3d) {
  unsigned seed = 10;
  for (const SpectralGeometry& g : spectral_cases()) {
    const SpectralInputs in = spectral_inputs(g, kSamples, seed);
    expect_close(run_spectral(cpu_, g, in, 0, kSamples), run_spectral(*gpu_, g, in, 0, kSamples), kSpectralTolerance,
                 g.describe());
    seed += 10;
  }
}

// Pipelined = sequential on the GPU: each sample alone gives its rows of the batch's y and dx, and the weight
// gradient added one sample per call (as micro-batches of one would) is the batch's, bit for bit.
TEST_F(CudaOperatorOps, SpectralSamplesAloneGiveTheBatchBits) {
  unsigned seed = 100;
  for (const SpectralGeometry& g : spectral_cases()) {
    SpectralInputs in = spectral_inputs(g, kSamples, seed);
    const Outputs batch = run_spectral(*gpu_, g, in, 0, kSamples);
    std::vector<float> grad = in.weight_grad;
    for (int64_t s = 0; s < kSamples; ++s) {
      in.weight_grad = grad;
      const Outputs alone = run_spectral(*gpu_, g, in, s, 1);
      const std::string what = g.describe() + ", sample " + std::to_string(s);
      expect_identical(alone.values[0], rows_of(batch.values[0], g.out_features(), s, 1), what + ": y");
      expect_identical(alone.values[1], rows_of(batch.values[1], g.in_features(), s, 1), what + ": dx");
      grad = alone.values[2];
    }
    expect_identical(grad, batch.values[2], g.describe() + ": weight_grad sample by sample");
    seed += 10;
  }
}

TEST_F(CudaOperatorOps, AttentionMatchesTheCpuWithAndWithoutDropout) {
  unsigned seed = 200;
  for (const AttentionGeometry& plain : attention_cases()) {
    for (float p : {0.0f, 0.25f}) {
      const AttentionGeometry g = with_dropout(plain, p, 10);
      const AttentionInputs in = attention_inputs(g, kSamples, seed);
      const std::string what = "attention " + std::to_string(g.tokens) + " tokens, dim " + std::to_string(g.dim) +
                               ", " + std::to_string(g.heads) + " heads, dropout " + std::to_string(p);
      expect_close(run_attention(cpu_, g, in, 0, kSamples), run_attention(*gpu_, g, in, 0, kSamples),
                   kAttentionTolerance, what);
      seed += 10;
    }
  }
}

// A sample alone, its dropout stream starting at its own global index, gives its rows of the batch bit for bit;
// another global index draws another mask.
TEST_F(CudaOperatorOps, AttentionSamplesAloneGiveTheBatchBitsAndTheirOwnMasks) {
  const AttentionGeometry plain = attention_cases()[2];
  const AttentionGeometry g = with_dropout(plain, 0.25f, 10);
  const AttentionInputs in = attention_inputs(g, kSamples, 300);
  const Outputs batch = run_attention(*gpu_, g, in, 0, kSamples);
  const int64_t s = 2, pair = g.heads * g.tokens * g.tokens;
  const Outputs alone = run_attention(*gpu_, with_dropout(plain, 0.25f, 12), in, s, 1);
  expect_identical(alone.values[0], rows_of(batch.values[0], g.tokens * g.dim, s, 1), "out");
  expect_identical(alone.values[1], rows_of(batch.values[1], pair, s, 1), "probs");
  expect_identical(alone.values[2], rows_of(batch.values[2], g.tokens * 3 * g.dim, s, 1), "dqkv");
  const Outputs shifted = run_attention(*gpu_, with_dropout(plain, 0.25f, 13), in, s, 1);
  EXPECT_NE(shifted.values[0], alone.values[0]) << "another global sample, another mask";
}

TEST_F(CudaOperatorOps, TokenLayoutsAndTheGatherAreTheCpuBits) {
  const int64_t dim = 6, tokens = 5;
  const std::vector<float> field = random_values(kSamples * dim * tokens, 400);
  std::vector<int64_t> source(static_cast<size_t>(dim * tokens));
  for (size_t j = 0; j < source.size(); ++j) source[j] = static_cast<int64_t>((j * 7 + 3) % source.size());
  source[4] = source[5];  // a repeated column
  auto run = [&](Backend& b) {
    const Tensor x = b.from_host(kSamples, dim * tokens, field.data());
    Tensor rows = b.empty(kSamples * tokens, dim), back = b.empty(kSamples, dim * tokens);
    Tensor gathered = b.empty(kSamples, dim * tokens);
    b.tokens_to_rows(dim, tokens, x, rows);
    b.rows_to_tokens(dim, tokens, rows, back);
    b.gather_columns(source, x, gathered);
    return download(b, {{"rows", &rows}, {"back", &back}, {"gathered", &gathered}});
  };
  const Outputs cpu = run(cpu_);
  const Outputs gpu = run(*gpu_);
  expect_identical(cpu, gpu, "token layouts");
  expect_identical(gpu.values[1], field, "rows_to_tokens(tokens_to_rows(x))");
}

// A second backend (its own cuFFT plans and cuBLAS handle) repeats every bit.
TEST_F(CudaOperatorOps, TwoRunsOnFreshBackendsAreBitwiseEqual) {
  CudaBackend second(0);
  unsigned seed = 500;
  for (const SpectralGeometry& g : spectral_cases()) {
    const SpectralInputs in = spectral_inputs(g, kSamples, seed);
    expect_identical(run_spectral(*gpu_, g, in, 0, kSamples), run_spectral(second, g, in, 0, kSamples),
                     g.describe());
  }
  for (const AttentionGeometry& plain : attention_cases()) {
    const AttentionGeometry g = with_dropout(plain, 0.25f, 0);
    const AttentionInputs in = attention_inputs(g, kSamples, seed);
    expect_identical(run_attention(*gpu_, g, in, 0, kSamples), run_attention(second, g, in, 0, kSamples),
                     "attention");
  }
}

}  // namespace
}  // namespace sluice::kernels
