// The oneDNN route of the CPU backend's GEMM (kernels/cpu/onednn_gemm.h) against OpenBLAS and a double-precision
// reference: odd shapes with tails, both orientations it takes, alpha and beta, beta = 0 over NaNs, leading
// dimensions wider than the matrix; and the rules around it: shape-only routing, same bits on every call, the
// caller's OpenMP thread count left as it was.
#include <cblas.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/onednn_gemm.h"
#include "kernels/cpu/onednn_route.h"
#include "tests/kernels/random_tensor.h"

namespace sluice::kernels {
namespace {

// Whether the backend routes here: by default on AVX-512 or where OpenBLAS runs a fallback core; BUILD sets
// SLUICE_ONEDNN_GEMM=on, so CI covers the route on any CPU.
bool routed_here() { return gemm_route_on_this_machine() != GemmRoute::kNone; }

struct Case {
  bool tb;
  int64_t m, n, k;
  int64_t pad;  // extra columns of every leading dimension
  float alpha, beta;
};

std::vector<float> random_values(int64_t count, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(static_cast<size_t>(count));
  for (float& v : values) v = uniform(generator);
  return values;
}

// c = alpha a op(b) + beta c in double; beta = 0 ignores c, as BLAS does.
std::vector<double> reference(const Case& s, const std::vector<float>& a, int64_t lda, const std::vector<float>& b,
                              int64_t ldb, const std::vector<float>& c, int64_t ldc) {
  std::vector<double> out(c.begin(), c.end());
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      double sum = 0.0;
      for (int64_t l = 0; l < s.k; ++l) sum += double{a[i * lda + l]} * (s.tb ? b[j * ldb + l] : b[l * ldb + j]);
      const double old = s.beta == 0.0f ? 0.0 : s.beta * double{c[i * ldc + j]};
      out[i * ldc + j] = s.alpha * sum + old;
    }
  }
  return out;
}

std::string describe(const Case& s) {
  return std::string(s.tb ? "x W^T" : "dy W") + " m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
         " k=" + std::to_string(s.k) + " pad=" + std::to_string(s.pad) + " alpha=" + std::to_string(s.alpha) +
         " beta=" + std::to_string(s.beta);
}

TEST(OnednnGemmTest, MatchesOpenBlasAndTheReferenceOnOddShapes) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<Case> cases = {
      {true, 32, 1024, 1024, 0, 1.0f, 0.0f}, {false, 32, 1024, 1024, 0, 1.0f, 0.0f},
      {true, 33, 129, 131, 0, 1.0f, 0.0f},   {false, 33, 129, 131, 0, 1.0f, 0.0f},
      {true, 1, 17, 5, 3, 0.5f, 1.0f},       {false, 7, 300, 1, 5, 2.0f, -0.5f},
      {true, 31, 257, 255, 7, -1.5f, 0.25f}, {false, 36, 250, 260, 1, 1.0f, 1.0f},
  };
  for (const Case& s : cases) {
    SCOPED_TRACE(describe(s));
    const int64_t lda = s.k + s.pad, ldb = (s.tb ? s.k : s.n) + s.pad, ldc = s.n + s.pad;
    const std::vector<float> a = random_values(s.m * lda, 1), b = random_values((s.tb ? s.n : s.k) * ldb, 2);
    std::vector<float> c = random_values(s.m * ldc, 3);
    if (s.beta == 0.0f) c.assign(c.size(), nan);  // BLAS semantics: beta = 0 must not read c
    std::vector<float> blas = c, ours = c;
    const std::vector<double> expected = reference(s, a, lda, b, ldb, c, ldc);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, s.tb ? CblasTrans : CblasNoTrans, static_cast<int>(s.m),
                static_cast<int>(s.n), static_cast<int>(s.k), s.alpha, a.data(), static_cast<int>(lda), b.data(),
                static_cast<int>(ldb), s.beta, blas.data(), static_cast<int>(ldc));
    ASSERT_EQ(
        onednn_gemm(false, s.tb, s.m, s.n, s.k, s.alpha, a.data(), lda, b.data(), ldb, s.beta, ours.data(), ldc),
        OnednnGemmResult::kDone);
    const double tolerance = 1e-5 * std::sqrt(static_cast<double>(s.k)) * (std::fabs(s.alpha) + 1.0);
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t j = 0; j < ldc; ++j) {
        const int64_t at = i * ldc + j;
        if (j >= s.n) {  // the padding between rows is not c's and must stay as it was (NaN included)
          ASSERT_TRUE(std::isnan(c[at]) ? std::isnan(ours[at]) : ours[at] == c[at]) << "padding written at " << at;
          continue;
        }
        ASSERT_NEAR(ours[at], expected[at], tolerance) << "row " << i << " column " << j;
        ASSERT_NEAR(ours[at], blas[at], 2 * tolerance) << "row " << i << " column " << j << " (against OpenBLAS)";
      }
    }
  }
}

TEST(OnednnGemmTest, SameBitsOnEveryCallAndTheCallersThreadCountKept) {
  omp_set_num_threads(3);  // a host's own setting, which the call must leave as it found it
  const int64_t m = 32, n = 256, k = 256;
  const std::vector<float> a = random_values(m * k, 4), w = random_values(n * k, 5);
  for (bool tb : {true, false}) {
    std::vector<float> first(m * n), second(m * n, 1.0f);
    ASSERT_EQ(onednn_gemm(false, tb, m, n, k, 1.0f, a.data(), k, w.data(), tb ? k : n, 0.0f, first.data(), n),
              OnednnGemmResult::kDone);
    ASSERT_EQ(onednn_gemm(false, tb, m, n, k, 1.0f, a.data(), k, w.data(), tb ? k : n, 0.0f, second.data(), n),
              OnednnGemmResult::kDone);
    EXPECT_EQ(first, second) << (tb ? "x W^T" : "dy W") << " differs between two identical calls";
    EXPECT_EQ(omp_get_max_threads(), 3) << "the OpenMP thread count was not restored";
  }
}

TEST(OnednnGemmTest, RoutingDependsOnTheShapeAndMachineOnly) {
  const GemmRoute route = gemm_route_on_this_machine();
  if (onednn_route_setting() == OnednnRoute::kOn) {
    EXPECT_EQ(route, GemmRoute::kAll) << "on routes every product";
  }
  // The benchmark model's weight products, the gradient product dy^T x, small products and the attention's per-head
  // products: each by the process's route and its shape alone (the rule itself: onednn_route_test).
  const int64_t shapes[][5] = {{0, 1, 32, 1024, 1024}, {0, 0, 32, 1024, 1024}, {0, 1, 256, 1024, 1024},
                               {1, 0, 1024, 1024, 32}, {0, 1, 36, 33, 17},     {0, 0, 32, 1024, 10},
                               {1, 1, 16, 64, 16}};
  for (const auto& s : shapes) {
    EXPECT_EQ(onednn_gemm_suits(s[0] != 0, s[1] != 0, s[2], s[3], s[4]),
              gemm_route_covers(route, s[0] != 0, s[1] != 0, s[2], s[3], s[4]))
        << "ta=" << s[0] << " tb=" << s[1] << " m=" << s[2] << " n=" << s[3] << " k=" << s[4];
  }
}

// The transposed-a orientations (dy^T x, and the attention's backward products) that the fallback route sends to
// oneDNN's sgemm: against OpenBLAS and a double reference, and the same bits on a second call.
TEST(OnednnGemmTest, TransposedAProductsMatchOpenBlas) {
  struct Shape {
    bool tb;
    int64_t m, n, k;
    float alpha, beta;
  };
  for (const Shape& s : {Shape{false, 33, 129, 131, 1.0f, 0.0f}, Shape{true, 17, 24, 40, 0.5f, 1.0f},
                         Shape{false, 256, 64, 32, -1.5f, 0.25f}}) {
    SCOPED_TRACE("tb=" + std::to_string(s.tb) + " m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
                 " k=" + std::to_string(s.k));
    const int64_t lda = s.m + 1, ldb = (s.tb ? s.k : s.n) + 2, ldc = s.n + 3;  // a is k x m, stored transposed
    const std::vector<float> a = random_values(s.k * lda, 4), b = random_values((s.tb ? s.n : s.k) * ldb, 5);
    const std::vector<float> c = random_values(s.m * ldc, 6);
    std::vector<float> blas = c, ours = c, again = c;
    cblas_sgemm(CblasRowMajor, CblasTrans, s.tb ? CblasTrans : CblasNoTrans, static_cast<int>(s.m),
                static_cast<int>(s.n), static_cast<int>(s.k), s.alpha, a.data(), static_cast<int>(lda), b.data(),
                static_cast<int>(ldb), s.beta, blas.data(), static_cast<int>(ldc));
    ASSERT_EQ(onednn_gemm(true, s.tb, s.m, s.n, s.k, s.alpha, a.data(), lda, b.data(), ldb, s.beta, ours.data(), ldc),
              OnednnGemmResult::kDone);
    ASSERT_EQ(onednn_gemm(true, s.tb, s.m, s.n, s.k, s.alpha, a.data(), lda, b.data(), ldb, s.beta, again.data(), ldc),
              OnednnGemmResult::kDone);
    ASSERT_EQ(std::memcmp(ours.data(), again.data(), ours.size() * sizeof(float)), 0) << "bits changed between calls";
    const double tolerance = 1e-5 * std::sqrt(static_cast<double>(s.k)) * (std::fabs(s.alpha) + 1.0);
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t j = 0; j < ldc; ++j) {
        const int64_t at = i * ldc + j;
        if (j >= s.n) {
          ASSERT_EQ(ours[at], c[at]) << "padding written at " << at;
          continue;
        }
        double sum = 0.0;
        for (int64_t l = 0; l < s.k; ++l) sum += double{a[l * lda + i]} * (s.tb ? b[j * ldb + l] : b[l * ldb + j]);
        const double expected = s.alpha * sum + (s.beta == 0.0f ? 0.0 : s.beta * double{c[at]});
        ASSERT_NEAR(ours[at], expected, tolerance) << "row " << i << " column " << j;
        ASSERT_NEAR(ours[at], blas[at], 2 * tolerance) << "row " << i << " column " << j << " (against OpenBLAS)";
      }
    }
  }
}

// Through the backend on one BLAS thread (the routed case): beta = 0 over NaNs, and k = 0 (the backend's own
// branch).
TEST(OnednnGemmTest, BackendProductsOnRoutedShapes) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (!routed_here()) GTEST_SKIP() << "no AVX-512 and SLUICE_ONEDNN_GEMM not on: the backend does not route to oneDNN";
  openblas_set_num_threads(1);
  ASSERT_TRUE(onednn_gemm_suits(false, true, 32, 512, 512));
  Backend& backend = cpu_backend();
  const Tensor x = random_tensor(32, 512, 6), w = random_tensor(512, 512, 7);
  Tensor y = Tensor::host(32, 512);
  for (int64_t i = 0; i < y.size(); ++i) y.data()[i] = nan;
  backend.gemm(Transpose::kNo, Transpose::kYes, 1.0f, x, w, 0.0f, y);
  for (int64_t j = 0; j < 512; j += 37) {
    double sum = 0.0;
    for (int64_t l = 0; l < 512; ++l) sum += double{x.data()[5 * 512 + l]} * w.data()[j * 512 + l];
    ASSERT_NEAR(y.data()[5 * 512 + j], sum, 1e-4) << "column " << j;
  }
  const Tensor empty_a = Tensor::host(32, 0), empty_b = Tensor::host(0, 512);
  backend.gemm(Transpose::kNo, Transpose::kNo, 1.0f, empty_a, empty_b, 0.0f, y);
  for (int64_t i = 0; i < y.size(); ++i) ASSERT_EQ(y.data()[i], 0.0f) << "k = 0 with beta = 0 must clear c";
}

// The bits of every product are the same whatever the BLAS thread count (`cpu_threads`): a routed product must not
// switch to OpenBLAS on a multi-threaded rank, nor run oneDNN on more threads (which splits the sum over k). So a
// run and its resume on another core count, or a pipeline and a reference with other thread counts, agree.
TEST(OnednnGemmTest, ProductsHaveTheSameBitsOnOneAndOnSeveralBlasThreads) {
  Backend& backend = cpu_backend();
  const Tensor x = random_tensor(32, 1024, 8), w = random_tensor(1024, 1024, 9), dy = random_tensor(32, 1024, 10);
  auto products = [&] {
    Tensor y = Tensor::host(32, 1024), dx = Tensor::host(32, 1024), dw = Tensor::host(1024, 1024);
    backend.gemm(Transpose::kNo, Transpose::kYes, 1.0f, x, w, 0.0f, y);    // x W^T (routed on AVX-512)
    backend.gemm(Transpose::kNo, Transpose::kNo, 1.0f, dy, w, 0.0f, dx);   // dy W (routed on AVX-512)
    backend.gemm(Transpose::kYes, Transpose::kNo, 1.0f, dy, x, 0.0f, dw);  // dy^T x (OpenBLAS)
    std::vector<float> all(y.data(), y.data() + y.size());
    all.insert(all.end(), dx.data(), dx.data() + dx.size());
    all.insert(all.end(), dw.data(), dw.data() + dw.size());
    return all;
  };
  const int before = openblas_get_num_threads();
  openblas_set_num_threads(1);
  const std::vector<float> one = products();
  openblas_set_num_threads(2);
  const std::vector<float> two = products();
  openblas_set_num_threads(before);
  ASSERT_EQ(one.size(), two.size());
  EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0)
      << "a product's bits depend on the BLAS thread count";
}

}  // namespace
}  // namespace sluice::kernels
