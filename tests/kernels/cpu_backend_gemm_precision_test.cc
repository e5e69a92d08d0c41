// The CPU backend's GEMM precision as the trainer sets it through Backend& (config key `precision`): fp32, or bf16
// through oneDNN where the CPU has avx512_bf16 (refused by name elsewhere), never tf32; and bf16's fidelity bound.
//
// The bound: bf16 keeps p = 8 significant bits, so rounding an fp32 operand to it (to nearest) changes it by a
// relative u = 2^-8 at most, and a product of two rounded operands by 2u + u^2. The sum over k is in fp32 (relative
// 2^-24 per add, K adds), so each element of c = a b obeys |c_bf16 - c| <= (2u + u^2 + K 2^-24) sum_k |a_ik b_kj|:
// a worst case that holds for any data. Against |c| itself, for operands of random signs, sum_k |a b| is about
// sqrt(K) |c|, hence the sqrt(K) 2^-8 often quoted; the rounding errors of random data cancel the same way, so the
// measured normwise error ||c_bf16 - c|| / ||c|| is about u / 2 (README.md, "Precision").
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

// A small MLP (64 x 256 -> relu 256 -> 16, mse against random targets) trained by SGD for some steps in fp32 and in
// bf16 from the same start, with fp32 master weights and fp32 updates in both: every step's bf16 loss stays within
// 4u of fp32's. Why 4u: each of the two layers adds the normwise u/2 of its product (the test above), so the output
// is off by about u; the loss, squared residuals of the size of the outputs, doubles that to 2u at worst (errors
// lined up with the residuals); the weights, updated from bf16 gradients, drift apart by as much again over the
// steps. Measured, the mean over the batch cancels most of it (the gap is printed). The gap must also not be ~0,
// as it would be if bf16 silently ran in fp32 (then the bits are fp32's exactly).
std::vector<double> mlp_losses(Backend& backend, int steps) {
  const int64_t rows = 64, in = 256, hidden = 256, out = 16;
  const Tensor x = random_tensor(rows, in, 31), target = random_tensor(rows, out, 32);
  Tensor w1 = random_tensor(hidden, in, 33), w2 = random_tensor(out, hidden, 34);
  backend.scale(1.0f / 16, w1);  // 1 / sqrt(fan-in), so the activations stay of order one
  backend.scale(1.0f / 16, w2);
  Tensor b1 = Tensor::host(1, hidden), b2 = Tensor::host(1, out), v1 = Tensor::host(hidden, in),
         v2 = Tensor::host(out, hidden), vb1 = Tensor::host(1, hidden), vb2 = Tensor::host(1, out);
  SgdHyper sgd;
  sgd.lr = 0.05f;
  std::vector<double> losses;
  for (int step = 0; step < steps; ++step) {
    Tensor pre = Tensor::host(rows, hidden), h = Tensor::host(rows, hidden), y = Tensor::host(rows, out),
           dy = Tensor::host(rows, out), dh = Tensor::host(rows, hidden);
    backend.gemm(Transpose::kNo, Transpose::kYes, 1.0f, x, w1, 0.0f, pre);
    backend.add_bias(b1, pre);
    for (int64_t i = 0; i < pre.size(); ++i) h.data()[i] = std::max(pre.data()[i], 0.0f);
    backend.gemm(Transpose::kNo, Transpose::kYes, 1.0f, h, w2, 0.0f, y);
    backend.add_bias(b2, y);
    losses.push_back(backend.mse(y, target, 1.0f / rows, dy) / rows);
    Tensor g1 = Tensor::host(hidden, in), g2 = Tensor::host(out, hidden), gb1 = Tensor::host(1, hidden),
           gb2 = Tensor::host(1, out);
    backend.gemm(Transpose::kYes, Transpose::kNo, 1.0f, dy, h, 1.0f, g2);  // backward-weights
    backend.accumulate_bias_grad(dy, gb2);
    backend.gemm(Transpose::kNo, Transpose::kNo, 1.0f, dy, w2, 0.0f, dh);  // backward-data
    for (int64_t i = 0; i < dh.size(); ++i) dh.data()[i] = pre.data()[i] > 0 ? dh.data()[i] : 0.0f;
    backend.gemm(Transpose::kYes, Transpose::kNo, 1.0f, dh, x, 1.0f, g1);
    backend.accumulate_bias_grad(dh, gb1);
    backend.sgd_update(sgd, g1, v1, w1);
    backend.sgd_update(sgd, g2, v2, w2);
    backend.sgd_update(sgd, gb1, vb1, b1);
    backend.sgd_update(sgd, gb2, vb2, b2);
  }
  return losses;
}

TEST(CpuBackendGemmPrecision, Bf16MlpTrainingStaysWithinItsBoundOfFp32) {
  if (!cpu_runs_bf16()) GTEST_SKIP() << onednn_bf16_gemm_missing();
  CpuBackend fp32;
  Bf16Backend bf16;
  const int steps = 10;
  const std::vector<double> reference = mlp_losses(fp32, steps), reduced = mlp_losses(bf16, steps);
  ASSERT_LT(reference.back(), reference.front()) << "the fp32 MLP did not train: the comparison would mean little";
  double worst = 0;
  for (int step = 0; step < steps; ++step) {
    const double gap = std::fabs(reduced[step] - reference[step]) / reference[step];
    EXPECT_LE(gap, 4 * kUnitRoundoff) << "step " << step << ": bf16 loss " << reduced[step] << ", fp32 "
                                      << reference[step];
    worst = std::max(worst, gap);
  }
  EXPECT_GE(worst, kUnitRoundoff / 256) << "bf16 losses equal fp32's: did the bf16 products run in fp32?";
  std::printf("MLP over %d steps: fp32 loss %.5f -> %.5f, largest relative gap of bf16's %.3g (4u = %.3g)\n", steps,
              reference.front(), reference.back(), worst, 4 * kUnitRoundoff);
}

// As the fp32 route: the blocks each run on one thread, so the bits do not depend on the rank's thread count.
TEST(CpuBackendGemmPrecision, Bf16ProductsHaveTheSameBitsOnOneAndOnTwoThreads) {
  if (!cpu_runs_bf16()) GTEST_SKIP() << onednn_bf16_gemm_missing();
  Bf16Backend bf16;
  // A layer at 32 rows (blocks of 512 columns), and one whose gradient dy^T x has a long inner size (2048 rows)
  // and a small c, where a library's own threads would split the sum over k.
  const Tensor x = random_tensor(32, 1024, 8), w = random_tensor(1024, 1024, 9), dy = random_tensor(32, 1024, 10);
  const Tensor tall_x = random_tensor(2048, 64, 11), tall_w = random_tensor(64, 64, 12),
               tall_dy = random_tensor(2048, 64, 13);
  auto products = [&] {
    std::vector<float> all = layer_products(bf16, x, w, dy).values;
    const std::vector<float> tall = layer_products(bf16, tall_x, tall_w, tall_dy).values;
    all.insert(all.end(), tall.begin(), tall.end());
    return all;
  };
  const int before = blas_thread_count();
  set_blas_thread_count(1);
  const std::vector<float> one = products();
  set_blas_thread_count(2);
  const std::vector<float> two = products();
  set_blas_thread_count(before);
  ASSERT_EQ(one.size(), two.size());
  EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0)
      << "a bf16 product's bits depend on the thread count";
}

}  // namespace
}  // namespace sluice::kernels
