// The CPU backend's token ops (kernels/cpu/cpu_attention.cc): attention against a double reference, the same bits
// on 1, 2 and 3 threads and for a sample alone or in a batch (with dropout masks keyed by the global sample), the layout changes and the gather, the argument checks
// of Backend, and the refusing defaults a backend without these ops inherits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/common/error.h"
#include "kernels/cpu/blas_threads.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/onednn_softmax.h"
#include "kernels/cpu/parallel_blocks.h"
#include "kernels/cpu/transpose_tiles.h"
#include "tests/kernels/random_tensor.h"

namespace sluice::kernels {
namespace {

const AttentionGeometry kGeometry{5, 6, 2};  // 5 tokens of 6 features, 2 heads of 3
constexpr int64_t kSamples = 4;

std::vector<float> values(const Tensor& t) { return std::vector<float>(t.data(), t.data() + t.size()); }

struct Results {
  std::vector<float> out, probs, dqkv;
};

Results run(const Tensor& qkv, const Tensor& dout, int threads) {
  Backend& backend = cpu_backend();
  const AttentionGeometry& g = kGeometry;
  const int64_t samples = qkv.rows() / g.tokens;
  Tensor out = backend.zeros(qkv.rows(), g.dim), probs = backend.zeros(samples, g.heads * g.tokens * g.tokens);
  Tensor dqkv = backend.zeros(qkv.rows(), 3 * g.dim);
  const int host_threads = blas_thread_count();
  const SpreadThresholdForTests spread(0.0);  // these small shapes run on the whole team too
  set_blas_thread_count(threads);
  backend.attention_forward(g, qkv, out, probs);
  backend.attention_backward(g, qkv, probs, dout, dqkv);
  set_blas_thread_count(host_threads);
  return {values(out), values(probs), values(dqkv)};
}

TEST(CpuAttention, ForwardIsTheDoubleFormula) {
  const AttentionGeometry& g = kGeometry;
  const Tensor qkv = random_tensor(kSamples * g.tokens, 3 * g.dim, 1);
  const Results r = run(qkv, random_tensor(kSamples * g.tokens, g.dim, 2), 1);
  const int64_t d = g.head_dim();
  for (int64_t s = 0; s < kSamples; ++s) {
    for (int64_t h = 0; h < g.heads; ++h) {
      for (int64_t i = 0; i < g.tokens; ++i) {
        auto at = [&](int64_t token, int64_t part, int64_t k) {
          return static_cast<double>(qkv.at(s * g.tokens + token, part * g.dim + h * d + k));
        };
        std::vector<double> p(static_cast<size_t>(g.tokens));
        double sum = 0.0;
        for (int64_t j = 0; j < g.tokens; ++j) {
          double dot = 0.0;
          for (int64_t k = 0; k < d; ++k) dot += at(i, 0, k) * at(j, 1, k);
          p[static_cast<size_t>(j)] = std::exp(dot / std::sqrt(static_cast<double>(d)));
          sum += p[static_cast<size_t>(j)];
        }
        for (int64_t k = 0; k < d; ++k) {
          double o = 0.0;
          for (int64_t j = 0; j < g.tokens; ++j) o += p[static_cast<size_t>(j)] / sum * at(j, 2, k);
          EXPECT_NEAR(r.out[static_cast<size_t>((s * g.tokens + i) * g.dim + h * d + k)], o, 1e-5);
        }
      }
    }
  }
}

TEST(CpuAttention, TheBitsDoNotDependOnTheThreadCountOrTheBatch) {
  const AttentionGeometry& g = kGeometry;
  const Tensor qkv = random_tensor(kSamples * g.tokens, 3 * g.dim, 3);
  const Tensor dout = random_tensor(kSamples * g.tokens, g.dim, 4);
  const Results one = run(qkv, dout, 1);
  for (int threads : {2, 3}) {
    const Results many = run(qkv, dout, threads);
    EXPECT_EQ(many.out, one.out) << threads;
    EXPECT_EQ(many.probs, one.probs) << threads;
    EXPECT_EQ(many.dqkv, one.dqkv) << threads;
  }
  // Sample 2 alone gives its rows of the batch's results.
  const int64_t s = 2, rows = g.tokens;
  const Tensor qkv_alone = Tensor::host_from(
      rows, 3 * g.dim, std::vector<float>(qkv.data() + s * rows * 3 * g.dim, qkv.data() + (s + 1) * rows * 3 * g.dim));
  const Tensor dout_alone = Tensor::host_from(
      rows, g.dim, std::vector<float>(dout.data() + s * rows * g.dim, dout.data() + (s + 1) * rows * g.dim));
  const Results alone = run(qkv_alone, dout_alone, 1);
  EXPECT_TRUE(std::equal(alone.out.begin(), alone.out.end(), one.out.begin() + s * rows * g.dim));
  EXPECT_TRUE(std::equal(alone.dqkv.begin(), alone.dqkv.end(), one.dqkv.begin() + s * rows * 3 * g.dim));
}

// Dropout: a sample's mask is keyed by its global index, so sample 2 of a batch starting at global sample 10 gives
// the same bits alone as global sample 12; on any thread count; and it drops about the share it should.
TEST(CpuAttention, DropoutMasksBelongToTheGlobalSample) {
  Backend& backend = cpu_backend();
  AttentionGeometry g = kGeometry;
  const int64_t width = g.heads * g.tokens * g.tokens;
  g.dropout = 0.25f;
  auto run_dropped = [&](const Tensor& qkv, const Tensor& dout, uint64_t first_sample, int threads) {
    AttentionGeometry at = g;
    at.stream = dropout_stream(7, 3, first_sample, width);
    const int64_t samples = qkv.rows() / g.tokens;
    Tensor out = backend.zeros(qkv.rows(), g.dim), probs = backend.zeros(samples, width);
    Tensor dqkv = backend.zeros(qkv.rows(), 3 * g.dim);
    const int host_threads = blas_thread_count();
    const SpreadThresholdForTests spread(0.0);
    set_blas_thread_count(threads);
    backend.attention_forward(at, qkv, out, probs);
    backend.attention_backward(at, qkv, probs, dout, dqkv);
    set_blas_thread_count(host_threads);
    return Results{values(out), values(probs), values(dqkv)};
  };
  const Tensor qkv = random_tensor(kSamples * g.tokens, 3 * g.dim, 8);
  const Tensor dout = random_tensor(kSamples * g.tokens, g.dim, 9);
  const Results batch = run_dropped(qkv, dout, 10, 1);
  EXPECT_NE(batch.out, run(qkv, dout, 1).out) << "dropout changed nothing";
  const Results threaded = run_dropped(qkv, dout, 10, 3);
  EXPECT_EQ(threaded.out, batch.out);
  EXPECT_EQ(threaded.dqkv, batch.dqkv);
  const int64_t s = 2, rows = g.tokens;
  const Tensor qkv_alone = Tensor::host_from(
      rows, 3 * g.dim, std::vector<float>(qkv.data() + s * rows * 3 * g.dim, qkv.data() + (s + 1) * rows * 3 * g.dim));
  const Tensor dout_alone = Tensor::host_from(
      rows, g.dim, std::vector<float>(dout.data() + s * rows * g.dim, dout.data() + (s + 1) * rows * g.dim));
  const Results alone = run_dropped(qkv_alone, dout_alone, 12, 1);
  EXPECT_TRUE(std::equal(alone.out.begin(), alone.out.end(), batch.out.begin() + s * rows * g.dim));
  EXPECT_TRUE(std::equal(alone.dqkv.begin(), alone.dqkv.end(), batch.dqkv.begin() + s * rows * 3 * g.dim));
  const Results shifted = run_dropped(qkv_alone, dout_alone, 13, 1);
  EXPECT_NE(shifted.out, alone.out) << "another global sample, another mask";
  AttentionGeometry wrong = g;
  wrong.stream = dropout_stream(7, 3, 0, width + 1);
  Tensor out = backend.zeros(qkv.rows(), g.dim), probs = backend.zeros(kSamples, width);
  EXPECT_THROW(backend.attention_forward(wrong, qkv, out, probs), Error);
}

// oneDNN's row softmax (kernels/cpu/onednn_softmax.h) and its backward against the double formulas, and a row's
// bits alone equal to its bits inside a block of rows: rows of 37 (two full vectors and a tail) at every place.
TEST(CpuAttention, SoftmaxRowsAreTheDoubleFormulaAndDependOnTheRowAlone) {
  constexpr int64_t kRows = 7, kCols = 37;
  Tensor s = random_tensor(kRows, kCols, 11), dp = random_tensor(kRows, kCols, 12);
  for (int64_t i = 0; i < s.size(); ++i) s.data()[i] *= 8.0f;  // logits with a spread, as scaled scores have
  Tensor p = Tensor::host(kRows, kCols), ds = Tensor::host(kRows, kCols);
  std::copy(s.data(), s.data() + s.size(), p.data());
  softmax_rows(kRows, kCols, p.data());
  softmax_rows_backward(kRows, kCols, p.data(), dp.data(), ds.data());
  for (int64_t r = 0; r < kRows; ++r) {
    const float* row = s.data() + r * kCols;
    const double top = *std::max_element(row, row + kCols);
    double sum = 0.0, dot = 0.0;
    for (int64_t j = 0; j < kCols; ++j) sum += std::exp(row[j] - top);
    for (int64_t j = 0; j < kCols; ++j) dot += std::exp(row[j] - top) / sum * dp.at(r, j);
    for (int64_t j = 0; j < kCols; ++j) {
      const double reference = std::exp(row[j] - top) / sum;
      EXPECT_NEAR(p.at(r, j), reference, 1e-6) << "row " << r << " column " << j;
      EXPECT_NEAR(ds.at(r, j), reference * (dp.at(r, j) - dot), 1e-6) << "row " << r << " column " << j;
    }
    std::vector<float> alone(row, row + kCols), alone_ds(kCols);
    softmax_rows(1, kCols, alone.data());
    softmax_rows_backward(1, kCols, p.data() + r * kCols, dp.data() + r * kCols, alone_ds.data());
    EXPECT_TRUE(std::equal(alone.begin(), alone.end(), p.data() + r * kCols)) << "forward, row " << r;
    EXPECT_TRUE(std::equal(alone_ds.begin(), alone_ds.end(), ds.data() + r * kCols)) << "backward, row " << r;
  }
}

TEST(CpuAttention, TokenLayoutsRoundTripAndTheGatherReadsItsSources) {
  Backend& backend = cpu_backend();
  const Tensor x = random_tensor(2, 3 * 4, 5);  // 2 samples of [D = 3, T = 4]
  Tensor rows = backend.zeros(2 * 4, 3), back = backend.zeros(2, 12);
  backend.tokens_to_rows(3, 4, x, rows);
  EXPECT_EQ(rows.at(1 * 4 + 2, 1), x.at(1, 1 * 4 + 2));  // sample 1, token 2, feature 1
  backend.rows_to_tokens(3, 4, rows, back);
  EXPECT_EQ(values(back), values(x));
  // Shapes over several tiles of the blocked transpose, neither a multiple of its tile: every element in place.
  constexpr int64_t kDim = 40, kTokens = 70;
  const Tensor wide = random_tensor(2, kDim * kTokens, 6);
  Tensor wide_rows = backend.zeros(2 * kTokens, kDim), wide_back = backend.zeros(2, kDim * kTokens);
  backend.tokens_to_rows(kDim, kTokens, wide, wide_rows);
  for (int64_t s = 0; s < 2; ++s)
    for (int64_t t = 0; t < kTokens; ++t)
      for (int64_t d = 0; d < kDim; ++d)
        ASSERT_EQ(wide_rows.at(s * kTokens + t, d), wide.at(s, d * kTokens + t)) << s << " " << t << " " << d;
  backend.rows_to_tokens(kDim, kTokens, wide_rows, wide_back);
  EXPECT_EQ(values(wide_back), values(wide));
  Tensor gathered = backend.zeros(2, 3);
  backend.gather_columns({11, 0, 5}, x, gathered);
  EXPECT_EQ(gathered.at(1, 0), x.at(1, 11));
  EXPECT_EQ(gathered.at(1, 2), x.at(1, 5));
}

// The blocked transpose (16 x 16 register blocks on AVX-512F, element by element elsewhere) puts every element in
// place, on whole blocks, edges and shapes smaller than a block, on both paths.
TEST(CpuAttention, TransposeMatrixPutsEveryElementInPlaceOnBothPaths) {
  for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{16, 16}, {256, 256}, {33, 47}, {17, 16},
                                                                     {16, 48}, {1, 5}, {70, 40}}) {
    const Tensor in = random_tensor(rows, cols, 9);
    std::vector<float> fast(static_cast<size_t>(rows * cols), -7.0f), portable(fast);
    transpose_matrix(in.data(), rows, cols, fast.data());
    transpose_matrix_portable(in.data(), rows, cols, portable.data());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        ASSERT_EQ(fast[static_cast<size_t>(c * rows + r)], in.at(r, c)) << rows << "x" << cols << " at " << r << ", " << c;
    EXPECT_EQ(fast, portable) << rows << "x" << cols;
  }
}

std::string refusal(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return std::string(e.what()) + (e.code() == ErrorCode::kInvalidArgument ? " [invalid]" : " [other]");
  }
  return "accepted";
}

TEST(CpuAttention, BadArgumentsAreRefusedNamingTheOp) {
  Backend& backend = cpu_backend();
  Tensor qkv = backend.zeros(10, 18), out = backend.zeros(10, 6), probs = backend.zeros(2, 2 * 25);
  const std::string heads = refusal([&] { backend.attention_forward({5, 6, 4}, qkv, out, probs); });
  EXPECT_NE(heads.find("attention_forward: attention of 5 tokens, dim 6, 4 heads"), std::string::npos) << heads;
  EXPECT_NE(heads.find("[invalid]"), std::string::npos) << heads;
  const std::string rows = refusal([&] { backend.attention_forward({3, 6, 2}, qkv, out, probs); });
  EXPECT_NE(rows.find("qkv has 10 rows, not a multiple of 3 tokens"), std::string::npos) << rows;
  Tensor small = backend.zeros(2, 2 * 24);
  EXPECT_NE(refusal([&] { backend.attention_forward(kGeometry, qkv, out, small); }).find("probs"),
            std::string::npos);
  Tensor y = backend.zeros(10, 2);
  EXPECT_NE(refusal([&] { backend.gather_columns({0, 18}, qkv, y); }).find("source column 18"), std::string::npos);
}

// A backend that has not implemented the token ops: the defaults it inherits refuse them, naming op and device.
class WithoutTokenOps : public CpuBackend {
 public:
  std::string device_name() const override { return "fake:1"; }

 protected:
  void attention_forward_impl(const AttentionGeometry& g, const Tensor& qkv, Tensor& out, Tensor& probs) override {
    Backend::attention_forward_impl(g, qkv, out, probs);
  }
  void tokens_to_rows_impl(int64_t dim, int64_t tokens, const Tensor& x, Tensor& y) override {
    Backend::tokens_to_rows_impl(dim, tokens, x, y);
  }
};

TEST(CpuAttention, ABackendWithoutTheOpsRefusesThemAsUnsupported) {
  WithoutTokenOps backend;
  Tensor qkv = backend.zeros(10, 18), out = backend.zeros(10, 6), probs = backend.zeros(2, 2 * 25);
  try {
    backend.attention_forward(kGeometry, qkv, out, probs);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("attention_forward is not available on fake:1"), std::string::npos)
        << e.what();
  }
  const Tensor tokens = backend.zeros(2, 30);
  Tensor rows = backend.zeros(10, 6);
  try {
    backend.tokens_to_rows(6, 5, tokens, rows);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("tokens_to_rows is not available on fake:1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sluice::kernels
