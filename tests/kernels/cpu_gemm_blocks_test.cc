// The CPU backend's products cut into blocks for a rank's threads (kernels/cpu/gemm_split.h, cpu_gemm.cc): every
// orientation split by rows and by columns, with a short last block, against a double-precision reference; the
// same bits on 1, 2 and 3 threads, also with products running on two host threads at once; and the BLAS thread
// setting: held at one while products run, put back (or replaced by a setting made meanwhile) when they end.
#include <cblas.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/blas_threads.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/gemm_split.h"
#include "kernels/cpu/onednn_gemm.h"
#include "tests/kernels/random_tensor.h"

namespace sluice::kernels {
namespace {

struct Case {
  bool ta, tb;
  int64_t m, n, k;
  float alpha, beta;
};

std::string describe(const Case& s) {
  return std::string(s.ta ? "T" : "N") + (s.tb ? "T" : "N") + " m=" + std::to_string(s.m) + " n=" +
         std::to_string(s.n) + " k=" + std::to_string(s.k) + " beta=" + std::to_string(s.beta);
}

// The stored operands for op(a) (m x k) and op(b) (k x n).
Tensor operand_a(const Case& s) { return s.ta ? random_tensor(s.k, s.m, 11) : random_tensor(s.m, s.k, 11); }
Tensor operand_b(const Case& s) { return s.tb ? random_tensor(s.n, s.k, 12) : random_tensor(s.k, s.n, 12); }

double reference_element(const Case& s, const Tensor& a, const Tensor& b, const Tensor& c0, int64_t i, int64_t j) {
  double sum = 0.0;
  for (int64_t l = 0; l < s.k; ++l) {
    const double x = s.ta ? a.data()[l * s.m + i] : a.data()[i * s.k + l];
    const double y = s.tb ? b.data()[j * s.k + l] : b.data()[l * s.n + j];
    sum += x * y;
  }
  return s.alpha * sum + (s.beta == 0.0f ? 0.0 : s.beta * double{c0.data()[i * s.n + j]});
}

// c after the backend's product on `threads` threads (the BLAS count, as cpu_threads sets it).
std::vector<float> product_on(const Case& s, const Tensor& a, const Tensor& b, const Tensor& c0, int threads) {
  Tensor c = Tensor::host(s.m, s.n);
  std::memcpy(c.data(), c0.data(), sizeof(float) * static_cast<size_t>(c.size()));
  set_blas_thread_count(threads);
  cpu_backend().gemm(s.ta ? Transpose::kYes : Transpose::kNo, s.tb ? Transpose::kYes : Transpose::kNo, s.alpha, a, b,
                     s.beta, c);
  EXPECT_EQ(blas_thread_count(), threads) << "the product must put back the BLAS thread count it found";
  return std::vector<float>(c.data(), c.data() + c.size());
}

// Every test leaves the BLAS setting as the binary started with it, also when an assertion ends it early.
class CpuGemmBlocksTest : public ::testing::Test {
 protected:
  void SetUp() override { host_threads_ = blas_thread_count(); }
  void TearDown() override { set_blas_thread_count(host_threads_); }

 private:
  int host_threads_ = 1;
};

const std::vector<Case>& split_cases() {
  static const std::vector<Case> cases = {
      {true, false, 1100, 600, 24, 1.0f, 1.0f},    // dy^T x: rows 512 + 512 + 76
      {false, false, 1100, 600, 24, 0.5f, 0.0f},   // rows of a plain a
      {false, true, 33, 1300, 40, 1.0f, -0.5f},    // columns 512 + 512 + 276 of a transposed b
      {true, true, 40, 700, 64, -1.0f, 0.0f},      // columns 256 x 2 + 188, both transposed
      {false, true, 32, 1024, 1024, 1.0f, 0.0f},   // x W^T of the benchmark layer (oneDNN on AVX-512)
      {false, false, 32, 1024, 1024, 1.0f, 0.0f},  // dy W of the benchmark layer (oneDNN on AVX-512)
  };
  return cases;
}

TEST_F(CpuGemmBlocksTest, SplitProductsMatchTheReferenceWithTheSameBitsOnEveryThreadCount) {
  for (const Case& s : split_cases()) {
    SCOPED_TRACE(describe(s));
    // BUILD forces the route on, so the routed blocks are tested on every CPU.
    if (!s.ta && s.k >= 1024) {
      EXPECT_TRUE(onednn_gemm_suits(s.ta, s.tb, s.m, s.n, s.k)) << "not routed to oneDNN";
    }
    ASSERT_GT(gemm_split(s.m, s.n, s.k).count, 1) << "the case must be split to test the split";
    const Tensor a = operand_a(s), b = operand_b(s);
    Tensor c0 = random_tensor(s.m, s.n, 13);
    if (s.beta == 0.0f)  // beta = 0 must not read c
      for (int64_t i = 0; i < c0.size(); ++i) c0.data()[i] = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> one = product_on(s, a, b, c0, 1);
    const double tolerance = 1e-5 * std::sqrt(static_cast<double>(s.k)) * 4.0;
    for (int64_t i = 0; i < s.m; i += 7) {
      for (int64_t j = 0; j < s.n; j += 3) {
        ASSERT_NEAR(one[static_cast<size_t>(i * s.n + j)], reference_element(s, a, b, c0, i, j), tolerance)
            << "row " << i << " column " << j;
      }
    }
    for (int threads : {2, 3}) {
      const std::vector<float> many = product_on(s, a, b, c0, threads);
      EXPECT_EQ(std::memcmp(one.data(), many.data(), one.size() * sizeof(float)), 0)
          << "the bits differ between 1 and " << threads << " threads";
    }
  }
}

// Two trainers in two host threads: their products overlap, so one's hold must not end the other's (the library
// back at 2 threads inside a team) nor lose the setting.
TEST_F(CpuGemmBlocksTest, ProductsOnTwoHostThreadsAtOnceKeepTheirBitsAndTheSetting) {
  std::vector<std::vector<float>> expected;
  std::vector<Tensor> as, bs, cs;
  for (const Case& s : split_cases()) {
    as.push_back(operand_a(s));
    bs.push_back(operand_b(s));
    cs.push_back(random_tensor(s.m, s.n, 13));
    expected.push_back(product_on(s, as.back(), bs.back(), cs.back(), 1));
  }
  set_blas_thread_count(2);
  std::vector<int> mismatches(2, 0);
  auto work = [&](int who) {
    for (int round = 0; round < 3; ++round) {
      for (size_t i = 0; i < split_cases().size(); ++i) {
        const Case& s = split_cases()[i];
        Tensor c = Tensor::host(s.m, s.n);
        std::memcpy(c.data(), cs[i].data(), sizeof(float) * static_cast<size_t>(c.size()));
        cpu_backend().gemm(s.ta ? Transpose::kYes : Transpose::kNo, s.tb ? Transpose::kYes : Transpose::kNo, s.alpha,
                           as[i], bs[i], s.beta, c);
        if (std::memcmp(c.data(), expected[i].data(), expected[i].size() * sizeof(float)) != 0) ++mismatches[who];
      }
    }
  };
  std::thread first(work, 0), second(work, 1);
  first.join();
  second.join();
  EXPECT_EQ(mismatches, (std::vector<int>{0, 0})) << "products whose bits differ from one thread's";
  EXPECT_EQ(openblas_get_num_threads(), 2) << "the setting found must be back once no product runs";
  EXPECT_EQ(blas_thread_count(), 2);
}

TEST_F(CpuGemmBlocksTest, ASettingMadeWhileProductsRunIsTheOnePutBack) {
  set_blas_thread_count(2);
  {
    const BlasHeldAtOneThread hold;
    EXPECT_EQ(hold.team_threads(), 2);
    EXPECT_EQ(openblas_get_num_threads(), 1) << "the library runs on one thread while a product runs";
    EXPECT_EQ(blas_thread_count(), 2) << "the rank's count is the kept setting";
    set_blas_thread_count(3);  // cpu_threads applied by a trainer starting on another thread
    EXPECT_EQ(openblas_get_num_threads(), 1);
    EXPECT_EQ(blas_thread_count(), 3);
    const BlasHeldAtOneThread nested;
    EXPECT_EQ(nested.team_threads(), 3);
  }
  EXPECT_EQ(openblas_get_num_threads(), 3) << "the last product out puts back the newest setting";
  {
    const BlasHeldAtOneThread hold;
    openblas_set_num_threads(4);  // the host, directly, behind Sluice's back
  }
  EXPECT_EQ(openblas_get_num_threads(), 3) << "the kept setting replaces one made behind Sluice's back";
}

}  // namespace
}  // namespace sluice::kernels
