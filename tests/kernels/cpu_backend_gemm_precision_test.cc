// The CPU backend's GEMM precision as the trainer sets it through Backend& (config key `precision`): fp32, or bf16
// through oneDNN where the CPU has avx512_bf16 (refused by name elsewhere), never tf32; and bf16's fidelity bound.
//
// The bound: bf16 keeps p = 8 significant bits, so rounding an fp32 operand to it (to nearest) changes it by a
// relative u = 2^-8 at most, and a product of two rounded operands by 2u + u^2. The sum over k is in fp32 (relative
// 2^-24 per add, K adds), so each element of c = a b obeys |c_bf16 - c| <= (2u + u^2 + K 2^-24) sum_k |a_ik b_kj|:
// a worst case that holds for any data. Against |c| itself, for operands of random signs, sum_k |a b| is about
// sqrt(K) |c|, hence the sqrt(K) 2^-8 often quoted; the rounding errors of random data cancel the same way, so the
// measured normwise error ||c_bf16 - c|| / ||c|| is about u / 2 (docs/CONFIG.md, "precision").
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "kernels/cpu/blas_threads.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/onednn_gemm.h"
#include "tests/kernels/random_tensor.h"

namespace sluice::kernels {
namespace {

constexpr double kUnitRoundoff = 1.0 / 256;  // 2^-8: bf16's 8 significant bits, rounded to nearest

bool cpu_runs_bf16() { return onednn_bf16_gemm_missing().empty(); }

// A CpuBackend in bf16 (the process-wide one is left alone, other tests share it).
struct Bf16Backend : CpuBackend {
  Bf16Backend() { set_gemm_precision(GemmPrecision::kBf16); }
};

TEST(CpuBackendGemmPrecision, StartsInFp32AndAcceptsFp32) {
  CpuBackend cpu;
  Backend& backend = cpu;
  EXPECT_EQ(backend.gemm_precision(), GemmPrecision::kFp32);
  EXPECT_NO_THROW(backend.set_gemm_precision(GemmPrecision::kFp32));
  EXPECT_EQ(backend.gemm_precision(), GemmPrecision::kFp32);
}

TEST(CpuBackendGemmPrecision, RefusesTf32NamingTheSettingAndDevice) {
  CpuBackend cpu;
  Backend& backend = cpu;
  try {
    backend.set_gemm_precision(GemmPrecision::kTf32);
    FAIL() << "tf32 was accepted by the CPU backend, which has no TF32 mode";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported) << e.what();
    EXPECT_EQ(std::string(e.what()), "precision: tf32 is not available on device cpu: the CPU has no TF32 mode; "
                                     "use fp32, or bf16 where the CPU has avx512_bf16");
  }
  EXPECT_EQ(backend.gemm_precision(), GemmPrecision::kFp32) << "a refused tf32 must leave fp32 in place";
}

// bf16 where oneDNN finds avx512_bf16; elsewhere a refusal that names the setting and the missing instructions.
TEST(CpuBackendGemmPrecision, Bf16AcceptedWhereTheCpuHasAvx512Bf16ElseRefusedByName) {
  CpuBackend cpu;
  Backend& backend = cpu;
  if (cpu_runs_bf16()) {
    EXPECT_NO_THROW(backend.set_gemm_precision(GemmPrecision::kBf16));
    EXPECT_EQ(backend.gemm_precision(), GemmPrecision::kBf16);
    backend.set_gemm_precision(GemmPrecision::kFp32);
    EXPECT_EQ(backend.gemm_precision(), GemmPrecision::kFp32);
    return;
  }
  try {
    backend.set_gemm_precision(GemmPrecision::kBf16);
    FAIL() << "bf16 accepted although " << onednn_bf16_gemm_missing();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("precision: bf16 is not available on device cpu: "), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(backend.gemm_precision(), GemmPrecision::kFp32);
}

// A CPU without avx512_bf16, emulated by capping oneDNN (ONEDNN_MAX_CPU_ISA, read at its first instruction-set
// query, hence a fresh process): bf16 is refused, never run silently in fp32 or in oneDNN's slow emulation.
TEST(CpuBackendGemmPrecisionDeathTest, Bf16RefusedNamingTheMissingIsaWhenOnednnIsCapped) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // re-executes the binary: oneDNN not yet initialized there
  EXPECT_EXIT(
      {
        setenv("ONEDNN_MAX_CPU_ISA", "AVX512_CORE", 1);
        CpuBackend cpu;
        try {
          cpu.set_gemm_precision(GemmPrecision::kBf16);
        } catch (const Error& e) {
          std::fprintf(stderr, "%s\n", e.what());
          std::exit(e.code() == ErrorCode::kUnsupported && cpu.gemm_precision() == GemmPrecision::kFp32 ? 0 : 2);
        }
        std::exit(1);
      },
      testing::ExitedWithCode(0), "precision: bf16 is not available on device cpu: this CPU lacks avx512_bf16");
}

// fp32 products of x (m x k) and w in the three orientations a dense layer uses, in double, and the sum of
// |a_ik b_kj| of each element (the scale of the rounding bound).
struct Products {
  std::vector<float> values;
  std::vector<double> exact, magnitude;
};

Products layer_products(Backend& backend, const Tensor& x, const Tensor& w, const Tensor& dy) {
  const int64_t rows = x.rows(), in = x.cols(), out = w.rows();
  Tensor y = Tensor::host(rows, out), dx = Tensor::host(rows, in), dw = Tensor::host(out, in);
  backend.gemm(Transpose::kNo, Transpose::kYes, 1.0f, x, w, 0.0f, y);    // forward x W^T
  backend.gemm(Transpose::kNo, Transpose::kNo, 1.0f, dy, w, 0.0f, dx);   // backward-data dy W
  backend.gemm(Transpose::kYes, Transpose::kNo, 1.0f, dy, x, 0.0f, dw);  // backward-weights dy^T x
  Products p;
  for (const Tensor* c : {&y, &dx, &dw}) p.values.insert(p.values.end(), c->data(), c->data() + c->size());
  auto reference = [&p](int64_t m, int64_t n, int64_t k, auto a_at, auto b_at) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0, size = 0;
        for (int64_t l = 0; l < k; ++l) {
          sum += double(a_at(i, l)) * b_at(l, j);
          size += std::fabs(double(a_at(i, l)) * b_at(l, j));
        }
        p.exact.push_back(sum);
        p.magnitude.push_back(size);
      }
    }
  };
  const float *xd = x.data(), *wd = w.data(), *dyd = dy.data();
  reference(rows, out, in, [&](int64_t i, int64_t l) { return xd[i * in + l]; },
            [&](int64_t l, int64_t j) { return wd[j * in + l]; });
  reference(rows, in, out, [&](int64_t i, int64_t l) { return dyd[i * out + l]; },
            [&](int64_t l, int64_t j) { return wd[l * in + j]; });
  reference(out, in, rows, [&](int64_t i, int64_t l) { return dyd[l * out + i]; },
            [&](int64_t l, int64_t j) { return xd[l * in + j]; });
  return p;
}

// Every element within the worst-case bound; normwise about u; and really not fp32 (whose error is ~2^-23).
TEST(CpuBackendGemmPrecision, Bf16ProductsStayWithinTheRoundingBoundAndDifferFromFp32) {
  if (!cpu_runs_bf16()) GTEST_SKIP() << onednn_bf16_gemm_missing();
  Bf16Backend bf16;
  const int64_t rows = 64, width = 512;  // inner sizes 512 (x W^T, dy W) and 64 (dy^T x)
  const Tensor x = random_tensor(rows, width, 21), w = random_tensor(width, width, 22), dy = random_tensor(rows, width, 23);
  const Products p = layer_products(bf16, x, w, dy);
  double error_squares = 0, value_squares = 0, worst_ratio = 0;
  for (size_t i = 0; i < p.values.size(); ++i) {
    const double error = std::fabs(p.values[i] - p.exact[i]);
    const double bound = (2 * kUnitRoundoff + kUnitRoundoff * kUnitRoundoff + width * 0x1p-24) * p.magnitude[i];
    ASSERT_LE(error, bound) << "element " << i << ": " << p.values[i] << " against " << p.exact[i];
    worst_ratio = std::max(worst_ratio, error / bound);
    error_squares += error * error;
    value_squares += p.exact[i] * p.exact[i];
  }
  const double normwise = std::sqrt(error_squares / value_squares);
  EXPECT_LE(normwise, kUnitRoundoff) << "normwise relative error of the bf16 products";
  EXPECT_GE(normwise, kUnitRoundoff / 16) << "the bf16 products are as exact as fp32's: did they run in fp32?";
  std::printf("bf16 products: normwise relative error %.3g (u = 2^-8 = %.3g), worst element at %.2f of its bound\n",
              normwise, kUnitRoundoff, worst_ratio);
}

// As the fp32 route: the blocks each run on one thread, so the bits do not depend on the rank's thread count.
TEST(CpuBackendGemmPrecision, Bf16ProductsHaveTheSameBitsOnOneAndOnTwoThreads) {
  if (!cpu_runs_bf16()) GTEST_SKIP() << onednn_bf16_gemm_missing();
  Bf16Backend bf16;
  const Tensor x = random_tensor(32, 1024, 8), w = random_tensor(1024, 1024, 9), dy = random_tensor(32, 1024, 10);
  const int before = blas_thread_count();
  set_blas_thread_count(1);
  const std::vector<float> one = layer_products(bf16, x, w, dy).values;
  set_blas_thread_count(2);
  const std::vector<float> two = layer_products(bf16, x, w, dy).values;
  set_blas_thread_count(before);
  ASSERT_EQ(one.size(), two.size());
  EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0)
      << "a bf16 product's bits depend on the thread count";
}

}  // namespace
}  // namespace sluice::kernels
