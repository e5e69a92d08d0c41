// CudaBackend against the reference CpuBackend, op by op, on the same inputs: 1e-5 relative (to the tensor's
// scale) in fp32 with TF32 off, 1e-2 for the bf16 and TF32 GEMM modes; dropout masks and Philox fills must be
// identical. Skips with the reason when there is no GPU (fails instead when SLUICE_REQUIRE_CUDA is set).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/common/error.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_host_staging.h"
#include "tests/cuda/cuda_test_support.h"

namespace sluice::kernels {
namespace {

using sluice::testing::relative_max_error;

constexpr double kFp32Tolerance = 1e-5;
constexpr double kReducedTolerance = 1e-2;

std::vector<float> random_values(int64_t count, unsigned seed, float low = -1.0f, float high = 1.0f) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(low, high);
  std::vector<float> values(static_cast<size_t>(count));
  for (float& v : values) v = uniform(generator);
  return values;
}

class CudaVsCpu : public ::testing::Test {
 protected:
  void SetUp() override {
    SLUICE_SKIP_WITHOUT_CUDA_DEVICE();
    gpu_ = std::make_unique<CudaBackend>(0);
  }

  // The same values on both devices.
  struct Pair {
    Tensor cpu;
    Tensor gpu;
  };
  Pair make(int64_t rows, int64_t cols, unsigned seed, float low = -1.0f, float high = 1.0f) {
    const std::vector<float> values = random_values(rows * cols, seed, low, high);
    return {cpu_.from_host(rows, cols, values.data()), gpu_->from_host(rows, cols, values.data())};
  }
  std::vector<float> download(const Tensor& t) {
    std::vector<float> values(static_cast<size_t>(t.size()));
    gpu_->to_host(t, values.data());
    return values;
  }
  void expect_close(const Pair& p, double tolerance, const std::string& what) {
    EXPECT_LE(relative_max_error(p.cpu.to_vector(), download(p.gpu)), tolerance) << what;
  }
  // The same bits in every element; reports how many differ and the first, not millions of values.
  static void expect_identical(const std::vector<float>& expected, const std::vector<float>& actual,
                               const std::string& what) {
    ASSERT_EQ(expected.size(), actual.size()) << what;
    size_t differing = 0;
    size_t first = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
      if (std::memcmp(&expected[i], &actual[i], sizeof(float)) != 0 && differing++ == 0) first = i;
    }
    EXPECT_EQ(differing, 0u) << what << ": " << differing << " of " << expected.size()
                             << " elements differ, the first at " << first << " (expected " << expected[first]
                             << ", got " << actual[first] << ")";
  }
  void expect_identical(const Pair& p, const std::string& what) {
    expect_identical(p.cpu.to_vector(), download(p.gpu), what);
  }

  CpuBackend cpu_;
  std::unique_ptr<CudaBackend> gpu_;
};

TEST_F(CudaVsCpu, GemmMatchesInEveryTransposeCombinationAndAccumulates) {
  const int64_t m = 33, k = 70, n = 45;
  for (Transpose ta : {Transpose::kNo, Transpose::kYes}) {
    for (Transpose tb : {Transpose::kNo, Transpose::kYes}) {
      Pair a = ta == Transpose::kNo ? make(m, k, 1) : make(k, m, 1);
      Pair b = tb == Transpose::kNo ? make(k, n, 2) : make(n, k, 2);
      Pair c = make(m, n, 3);  // beta = 1: must add to what is there
      cpu_.gemm(ta, tb, 0.5f, a.cpu, b.cpu, 1.0f, c.cpu);
      gpu_->gemm(ta, tb, 0.5f, a.gpu, b.gpu, 1.0f, c.gpu);
      expect_close(c, kFp32Tolerance, "gemm ta=" + std::to_string(ta == Transpose::kYes) +
                                          " tb=" + std::to_string(tb == Transpose::kYes));
    }
  }
}

TEST_F(CudaVsCpu, ReducedPrecisionGemmModesStayWithinOnePercent) {
  for (GemmPrecision precision : {GemmPrecision::kTf32, GemmPrecision::kBf16}) {
    gpu_->set_gemm_precision(precision);
    Pair a = make(64, 256, 4), b = make(256, 96, 5), c = make(64, 96, 6);
    cpu_.gemm(Transpose::kNo, Transpose::kNo, 1.0f, a.cpu, b.cpu, 0.0f, c.cpu);
    gpu_->gemm(Transpose::kNo, Transpose::kNo, 1.0f, a.gpu, b.gpu, 0.0f, c.gpu);
    expect_close(c, kReducedTolerance, gemm_precision_name(precision));
  }
}

// The trainer sets the mode through Backend& from the config's gemm_precision: the backend must start in fp32 (no
// environment variable decides it any more), report what was set, and really change the math: bf16 operands lose
// mantissa bits, so its product differs from fp32's, and switching back gives the fp32 result again.
TEST_F(CudaVsCpu, SetGemmPrecisionThroughTheInterfaceSwitchesTheMath) {
  Backend& backend = *gpu_;
  EXPECT_EQ(backend.gemm_precision(), GemmPrecision::kFp32);
  Pair a = make(32, 128, 7), b = make(128, 48, 8);
  auto product = [&](GemmPrecision precision) {
    backend.set_gemm_precision(precision);
    EXPECT_EQ(backend.gemm_precision(), precision) << gemm_precision_name(precision);
    Tensor c = backend.zeros(32, 48);
    backend.gemm(Transpose::kNo, Transpose::kNo, 1.0f, a.gpu, b.gpu, 0.0f, c);
    return download(c);
  };
  const std::vector<float> fp32 = product(GemmPrecision::kFp32);
  const std::vector<float> bf16 = product(GemmPrecision::kBf16);
  const std::vector<float> fp32_again = product(GemmPrecision::kFp32);
  EXPECT_GT(relative_max_error(fp32, bf16), 0.0) << "bf16 gave fp32's exact bits: the mode did not switch";
  EXPECT_LE(relative_max_error(fp32, bf16), kReducedTolerance);
  EXPECT_LE(relative_max_error(fp32, fp32_again), kFp32Tolerance) << "switching back to fp32 did not restore it";
  // TF32 only PERMITS cuBLAS to round operands to 10-bit mantissas (it may still pick an fp32 kernel for a product
  // this small), so only the tolerance is checked; fp32 mode never using TF32 is what GemmMatchesInEveryTransposeCombinationAndAccumulates checks at 1e-5.
  const std::vector<float> tf32 = product(GemmPrecision::kTf32);
  EXPECT_LE(relative_max_error(fp32, tf32), kReducedTolerance);
}

TEST_F(CudaVsCpu, GemmRejectsAWrongOutputShapeNamingIt) {
  Tensor a = gpu_->zeros(2, 3), b = gpu_->zeros(3, 4), c = gpu_->zeros(2, 5);
  try {
    gpu_->gemm(Transpose::kNo, Transpose::kNo, 1.0f, a, b, 0.0f, c);
    FAIL() << "a [2][5] output for a [2][3] x [3][4] product was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("gemm: c has shape [2][5], expected [2][4]"), std::string::npos)
        << e.what();
  }
}

TEST_F(CudaVsCpu, HostTensorsAreRejectedBeforeAnyLaunch) {
  Tensor host = Tensor::host(2, 2);
  try {
    gpu_->scale(2.0f, host);
    FAIL() << "a host tensor reached a CUDA kernel";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("scale: x is a host tensor"), std::string::npos) << e.what();
  }
}

TEST_F(CudaVsCpu, BiasOpsMatchAndTheGradientAccumulates) {
  Pair bias = make(1, 300, 7), y = make(17, 300, 8), grad = make(1, 300, 9);
  cpu_.add_bias(bias.cpu, y.cpu);
  gpu_->add_bias(bias.gpu, y.gpu);
  expect_close(y, kFp32Tolerance, "add_bias");
  cpu_.accumulate_bias_grad(y.cpu, grad.cpu);
  gpu_->accumulate_bias_grad(y.gpu, grad.gpu);
  expect_close(grad, kFp32Tolerance, "accumulate_bias_grad");
}

TEST_F(CudaVsCpu, ActivationsMatchForwardAndBackward) {
  for (Activation act : {Activation::kRelu, Activation::kGelu, Activation::kTanh}) {
    Pair x = make(8, 129, 10, -4.0f, 4.0f), y = make(8, 129, 11), dy = make(8, 129, 12), dx = make(8, 129, 13);
    cpu_.activation_forward(act, x.cpu, y.cpu);
    gpu_->activation_forward(act, x.gpu, y.gpu);
    expect_close(y, kFp32Tolerance, std::string("forward ") + activation_name(act));
    const bool input = activation_backward_uses_input(act);
    cpu_.activation_backward(act, input ? x.cpu : y.cpu, dy.cpu, dx.cpu);
    gpu_->activation_backward(act, input ? x.gpu : y.gpu, dy.gpu, dx.gpu);
    expect_close(dx, kFp32Tolerance, std::string("backward ") + activation_name(act));
  }
}

// ReLU passes NaN on (as torch.relu and the CPU kernel do), forward, fused and backward; -0, +-Inf, zero and
// ordinary values give the CPU's bits.
TEST_F(CudaVsCpu, ReluPassesNanLikeTheCpu) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> values = {nan, -2.0f, -0.0f, 0.0f, 0.5f, inf, -inf, nan};
  const int64_t n = static_cast<int64_t>(values.size());
  Pair x{cpu_.from_host(1, n, values.data()), gpu_->from_host(1, n, values.data())};
  Pair y = make(1, n, 40), dy = make(1, n, 41), dx = make(1, n, 42), pre = make(1, n, 43), fused = make(1, n, 44);
  cpu_.activation_forward(Activation::kRelu, x.cpu, y.cpu);
  gpu_->activation_forward(Activation::kRelu, x.gpu, y.gpu);
  const std::vector<float> gpu_y = download(y.gpu), cpu_y = y.cpu.to_vector();
  EXPECT_TRUE(std::isnan(gpu_y[0]) && std::isnan(gpu_y[7])) << gpu_y[0];
  expect_identical(std::vector<float>(cpu_y.begin() + 1, cpu_y.end() - 1),
                   std::vector<float>(gpu_y.begin() + 1, gpu_y.end() - 1), "relu forward");
  cpu_.activation_backward(Activation::kRelu, y.cpu, dy.cpu, dx.cpu);
  gpu_->activation_backward(Activation::kRelu, y.gpu, dy.gpu, dx.gpu);
  expect_identical(dx, "relu backward");  // the gradient passes where the output is NaN, on both
  const std::vector<float> zeros(static_cast<size_t>(n), 0.0f);
  Pair bias{cpu_.from_host(1, n, zeros.data()), gpu_->from_host(1, n, zeros.data())};
  gpu_->copy(x.gpu, pre.gpu);
  gpu_->bias_activation_forward(Activation::kRelu, bias.gpu, pre.gpu, fused.gpu);
  EXPECT_TRUE(std::isnan(download(fused.gpu)[0]));
}

// The fused bias + activation kernel against the CPU's fused op, and against the GPU's own two-launch path:
// the same per-element float operations (--fmad=false), so the GPU's fused and unfused results are identical.
TEST_F(CudaVsCpu, FusedBiasActivationMatchesTheCpuAndTheUnfusedKernels) {
  for (Activation act : {Activation::kRelu, Activation::kGelu, Activation::kTanh}) {
    Pair bias = make(1, 300, 30), pre = make(7, 300, 31, -4.0f, 4.0f), y = make(7, 300, 32);
    Pair separate_pre = make(7, 300, 31, -4.0f, 4.0f), separate_y = make(7, 300, 33);
    cpu_.bias_activation_forward(act, bias.cpu, pre.cpu, y.cpu);
    gpu_->bias_activation_forward(act, bias.gpu, pre.gpu, y.gpu);
    expect_close(pre, kFp32Tolerance, std::string("fused pre ") + activation_name(act));
    expect_close(y, kFp32Tolerance, std::string("fused y ") + activation_name(act));
    gpu_->add_bias(bias.gpu, separate_pre.gpu);
    gpu_->activation_forward(act, separate_pre.gpu, separate_y.gpu);
    EXPECT_EQ(download(pre.gpu), download(separate_pre.gpu)) << activation_name(act);
    EXPECT_EQ(download(y.gpu), download(separate_y.gpu)) << activation_name(act);
  }
}

TEST_F(CudaVsCpu, LayerNormMatchesForwardBackwardAndParameterGradients) {
  const int64_t rows = 12, cols = 1000;
  Pair x = make(rows, cols, 14, -3.0f, 5.0f), gamma = make(1, cols, 15), beta = make(1, cols, 16);
  Pair y = make(rows, cols, 17), mean = make(rows, 1, 18), rstd = make(rows, 1, 19);
  cpu_.layernorm_forward(x.cpu, gamma.cpu, beta.cpu, 1e-5f, y.cpu, mean.cpu, rstd.cpu);
  gpu_->layernorm_forward(x.gpu, gamma.gpu, beta.gpu, 1e-5f, y.gpu, mean.gpu, rstd.gpu);
  expect_close(y, kFp32Tolerance, "layernorm y");
  expect_close(mean, kFp32Tolerance, "layernorm mean");
  expect_close(rstd, kFp32Tolerance, "layernorm rstd");
  Pair dy = make(rows, cols, 20), dx = make(rows, cols, 21), dgamma = make(1, cols, 22), dbeta = make(1, cols, 23);
  cpu_.layernorm_backward_input(dy.cpu, x.cpu, gamma.cpu, mean.cpu, rstd.cpu, dx.cpu);
  gpu_->layernorm_backward_input(dy.gpu, x.gpu, gamma.gpu, mean.gpu, rstd.gpu, dx.gpu);
  expect_close(dx, kFp32Tolerance, "layernorm dx");
  cpu_.layernorm_accumulate_param_grads(dy.cpu, x.cpu, mean.cpu, rstd.cpu, dgamma.cpu, dbeta.cpu);
  gpu_->layernorm_accumulate_param_grads(dy.gpu, x.gpu, mean.gpu, rstd.gpu, dgamma.gpu, dbeta.gpu);
  expect_close(dgamma, kFp32Tolerance, "layernorm gamma grad");
  expect_close(dbeta, kFp32Tolerance, "layernorm beta grad");
}

TEST_F(CudaVsCpu, DropoutMasksAndPhiloxFillsAreIdentical) {
  const RngStream stream = dropout_stream(1234, 7, 5, 97);  // rows are samples 5 .. 35
  Pair x = make(31, 97, 24), y = make(31, 97, 25), dx = make(31, 97, 26);  // 3007 elements: not a multiple of 4
  cpu_.dropout_forward(x.cpu, 0.3f, stream, y.cpu);
  gpu_->dropout_forward(x.gpu, 0.3f, stream, y.gpu);
  const std::vector<float> expected = y.cpu.to_vector();
  const std::vector<float> actual = download(y.gpu);
  int dropped = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(expected[i] == 0.0f, actual[i] == 0.0f) << "mask differs at element " << i;
    dropped += expected[i] == 0.0f;
  }
  EXPECT_GT(dropped, 0);
  expect_close(y, kFp32Tolerance, "dropout forward");
  cpu_.dropout_backward(x.cpu, 0.3f, stream, dx.cpu);
  gpu_->dropout_backward(x.gpu, 0.3f, stream, dx.gpu);
  expect_close(dx, kFp32Tolerance, "dropout backward");

  // Row r of a per-sample stream is sample first_sample + r on the GPU too: the mask drawn from sample 6 on is
  // the mask above from its row 1 on (the same samples in another micro-batch).
  Pair later = make(30, 97, 28), later_y = make(30, 97, 29);
  gpu_->dropout_forward(later.gpu, 0.3f, dropout_stream(1234, 7, 6, 97), later_y.gpu);
  const std::vector<float> later_actual = download(later_y.gpu);
  for (size_t i = 0; i < later_actual.size(); ++i) {
    ASSERT_EQ(later_actual[i] == 0.0f, expected[97 + i] == 0.0f) << "sample-keyed mask differs at element " << i;
  }

  Pair filled = make(13, 77, 27);
  cpu_.fill_uniform(init_stream(99, 3, 1), -0.2f, 0.2f, filled.cpu);
  gpu_->fill_uniform(init_stream(99, 3, 1), -0.2f, 0.2f, filled.gpu);
  EXPECT_EQ(filled.cpu.to_vector(), download(filled.gpu)) << "parameter init must not depend on the device";
}

// 2049 x 2049 = 4,198,401 elements = 1,049,601 Philox blocks of 4, more than one pass of the capped grid (kMaxBlocks
// 4096 x 256 threads = 1,048,576): the grid-stride loops of dropout_kernel and fill_uniform_kernel take a second
// pass for the last 1025 blocks, which the smaller tensors above never reach. Masks and fills must be identical.
TEST_F(CudaVsCpu, DropoutMasksAndPhiloxFillsAreIdenticalBeyondOneGridPass) {
  constexpr int64_t kSide = 2049;
  const RngStream stream = dropout_stream(4321, 3, 1, kSide);
  Pair x = make(kSide, kSide, 40), y = make(kSide, kSide, 41), dx = make(kSide, kSide, 42);
  cpu_.dropout_forward(x.cpu, 0.3f, stream, y.cpu);
  gpu_->dropout_forward(x.gpu, 0.3f, stream, y.gpu);
  expect_identical(y, "dropout forward, 2049 x 2049");
  cpu_.dropout_backward(x.cpu, 0.3f, stream, dx.cpu);
  gpu_->dropout_backward(x.gpu, 0.3f, stream, dx.gpu);
  expect_identical(dx, "dropout backward, 2049 x 2049");
  const std::vector<float> expected = y.cpu.to_vector();
  int64_t dropped_in_second_pass = 0;  // the mask is not trivial where only the second pass writes
  for (size_t i = size_t{4} * 1048576; i < expected.size(); ++i) dropped_in_second_pass += expected[i] == 0.0f;
  EXPECT_GT(dropped_in_second_pass, 0);

  Pair filled = make(kSide, kSide, 43);
  cpu_.fill_uniform(init_stream(2024, 6, 0), -0.05f, 0.05f, filled.cpu);
  gpu_->fill_uniform(init_stream(2024, 6, 0), -0.05f, 0.05f, filled.gpu);
  expect_identical(filled, "fill_uniform, 2049 x 2049");
}

// Column sums (bias and LayerNorm parameter gradients) are two fixed-shape passes: row slices (min(64, rows) of
// them) summed per column, then the slices in order, added into the gradient. Shapes: rows not a multiple of the
// slice count (1000, 65), rows below it (3: a slice per row), exactly it (64), no rows (the gradient must not
// change), and more columns than one pass of the capped grid (2 x 1,048,600 > 4096 x 256 columns: both passes
// stride). Each must match the CPU and repeat bit for bit.
const std::vector<std::pair<int64_t, int64_t>>& column_sum_shapes() {
  static const std::vector<std::pair<int64_t, int64_t>> shapes = {
      {1000, 777}, {3, 5}, {64, 33}, {65, 7}, {0, 6}, {2, 1048600}};
  return shapes;
}

std::string shape_name(int64_t rows, int64_t cols) { return std::to_string(rows) + " x " + std::to_string(cols); }

TEST_F(CudaVsCpu, BiasGradColumnSumsMatchTheCpuAndRepeatBitForBit) {
  unsigned seed = 200;
  for (const auto& [rows, cols] : column_sum_shapes()) {
    const std::string shape = shape_name(rows, cols);
    Pair dy = make(rows, cols, seed++), grad = make(1, cols, seed++);
    Tensor again = gpu_->from_host(1, cols, grad.cpu.to_vector().data());
    cpu_.accumulate_bias_grad(dy.cpu, grad.cpu);
    gpu_->accumulate_bias_grad(dy.gpu, grad.gpu);
    gpu_->accumulate_bias_grad(dy.gpu, again);
    expect_close(grad, kFp32Tolerance, "accumulate_bias_grad " + shape);
    expect_identical(download(grad.gpu), download(again), "accumulate_bias_grad run twice, " + shape);
    if (rows == 0) expect_identical(grad, "accumulate_bias_grad over no rows must leave the gradient alone");
  }
}

TEST_F(CudaVsCpu, LayerNormParamGradColumnSumsMatchTheCpuAndRepeatBitForBit) {
  unsigned seed = 300;
  for (const auto& [rows, cols] : column_sum_shapes()) {
    const std::string shape = shape_name(rows, cols);
    Pair x = make(rows, cols, seed++, -3.0f, 5.0f), dy = make(rows, cols, seed++);
    Pair dgamma = make(1, cols, seed++), dbeta = make(1, cols, seed++);
    // Statistics from the CPU on both devices, so only the column sums are compared.
    Tensor gamma = Tensor::host_from(1, cols, std::vector<float>(static_cast<size_t>(cols), 1.0f));
    Tensor beta = Tensor::host_from(1, cols, std::vector<float>(static_cast<size_t>(cols), 0.0f));
    Tensor y = cpu_.zeros(rows, cols), mean = cpu_.zeros(rows, 1), rstd = cpu_.zeros(rows, 1);
    cpu_.layernorm_forward(x.cpu, gamma, beta, 1e-5f, y, mean, rstd);
    Tensor gpu_mean = gpu_->from_host(rows, 1, mean.to_vector().data());
    Tensor gpu_rstd = gpu_->from_host(rows, 1, rstd.to_vector().data());
    Tensor dgamma_again = gpu_->from_host(1, cols, dgamma.cpu.to_vector().data());
    Tensor dbeta_again = gpu_->from_host(1, cols, dbeta.cpu.to_vector().data());
    cpu_.layernorm_accumulate_param_grads(dy.cpu, x.cpu, mean, rstd, dgamma.cpu, dbeta.cpu);
    gpu_->layernorm_accumulate_param_grads(dy.gpu, x.gpu, gpu_mean, gpu_rstd, dgamma.gpu, dbeta.gpu);
    gpu_->layernorm_accumulate_param_grads(dy.gpu, x.gpu, gpu_mean, gpu_rstd, dgamma_again, dbeta_again);
    expect_close(dgamma, kFp32Tolerance, "layernorm gamma grad " + shape);
    expect_close(dbeta, kFp32Tolerance, "layernorm beta grad " + shape);
    expect_identical(download(dgamma.gpu), download(dgamma_again), "gamma grad run twice, " + shape);
    expect_identical(download(dbeta.gpu), download(dbeta_again), "beta grad run twice, " + shape);
    if (rows == 0) {
      expect_identical(dgamma, "gamma grad over no rows must be unchanged");
      expect_identical(dbeta, "beta grad over no rows must be unchanged");
    }
  }
}

// Pinned staging buffers are cached: a buffer returned by its request is handed to the next message that fits
// (capacity between the size and twice it), keeps working for copies both ways, and may outlive the staging.
TEST_F(CudaVsCpu, HostStagingReusesPinnedBuffers) {
  constexpr int64_t kCount = 1000;
  constexpr size_t kBytes = kCount * sizeof(float);
  CudaHostStaging staging(gpu_->stream());
  Pair source = make(1, kCount, 50);
  float* first = nullptr;
  {
    std::unique_ptr<StagingBuffer> buffer = staging.allocate(kCount);
    first = buffer->data();
    ASSERT_NE(first, nullptr);
    staging.copy_to_host(source.gpu.data(), buffer->data(), kCount);
    EXPECT_EQ(std::vector<float>(buffer->data(), buffer->data() + kCount), source.cpu.to_vector());
    EXPECT_EQ(staging.cached_bytes(), 0u);
  }
  EXPECT_EQ(staging.cached_bytes(), kBytes) << "a destroyed buffer must go back to the cache";
  {
    std::unique_ptr<StagingBuffer> reused = staging.allocate(kCount);
    EXPECT_EQ(reused->data(), first) << "the cached buffer of the same size was not reused";
    EXPECT_EQ(staging.cached_bytes(), 0u);
    std::unique_ptr<StagingBuffer> fresh = staging.allocate(kCount);  // the cache is empty: a new one
    EXPECT_NE(fresh->data(), first);
    // The reused buffer still holds the copy above; copy it back to the device through the staging.
    Tensor back = gpu_->zeros(1, kCount);
    staging.copy_to_device(reused->data(), back.data(), kCount);
    EXPECT_EQ(download(back), source.cpu.to_vector());
  }
  EXPECT_EQ(staging.cached_bytes(), 2 * kBytes);
  std::unique_ptr<StagingBuffer> smaller = staging.allocate(kCount / 2);  // 2000 bytes: a 4000-byte buffer fits
  EXPECT_EQ(staging.cached_bytes(), kBytes);
  std::unique_ptr<StagingBuffer> tiny = staging.allocate(kCount / 4 - 1);  // 3996 bytes is over twice 996: new
  EXPECT_EQ(staging.cached_bytes(), kBytes);
  EXPECT_EQ(staging.allocate(0)->data(), nullptr);

  std::unique_ptr<StagingBuffer> survivor;
  {
    CudaHostStaging short_lived(gpu_->stream());
    survivor = short_lived.allocate(10);
    short_lived.allocate(10).reset();
    EXPECT_EQ(short_lived.cached_bytes(), 10 * sizeof(float));
  }
  survivor.reset();  // returned after its staging was destroyed: freed, not cached, and no crash
}

TEST_F(CudaVsCpu, ElementwiseOpsAndSumOfSquaresMatch) {
  Pair a = make(19, 53, 28), b = make(19, 53, 29), out = make(19, 53, 30);
  cpu_.add(a.cpu, b.cpu, out.cpu);
  gpu_->add(a.gpu, b.gpu, out.gpu);
  expect_close(out, kFp32Tolerance, "add");
  cpu_.axpy(-0.7f, a.cpu, b.cpu);
  gpu_->axpy(-0.7f, a.gpu, b.gpu);
  expect_close(b, kFp32Tolerance, "axpy");
  cpu_.scale(3.0f, b.cpu);
  gpu_->scale(3.0f, b.gpu);
  expect_close(b, kFp32Tolerance, "scale");
  cpu_.copy(b.cpu, a.cpu);
  gpu_->copy(b.gpu, a.gpu);
  expect_close(a, 0.0, "copy");
  const double expected = cpu_.sum_of_squares(a.cpu);
  EXPECT_NEAR(gpu_->sum_of_squares(a.gpu), expected, 1e-9 * expected);
  gpu_->fill(2.5f, a.gpu);
  EXPECT_EQ(download(a.gpu), std::vector<float>(19 * 53, 2.5f));
}

TEST_F(CudaVsCpu, LossesMatchInValueAndGradient) {
  Pair pred = make(16, 10, 31), target = make(16, 10, 32, 0.0f, 1.0f), grad = make(16, 10, 33);
  const double cpu_mse = cpu_.mse(pred.cpu, target.cpu, 0.25f, grad.cpu);
  const double gpu_mse = gpu_->mse(pred.gpu, target.gpu, 0.25f, grad.gpu);
  EXPECT_NEAR(gpu_mse, cpu_mse, kFp32Tolerance * cpu_mse);
  expect_close(grad, kFp32Tolerance, "mse grad");
  const double cpu_ce = cpu_.softmax_cross_entropy(pred.cpu, target.cpu, 0.25f, grad.cpu);
  const double gpu_ce = gpu_->softmax_cross_entropy(pred.gpu, target.gpu, 0.25f, grad.gpu);
  EXPECT_NEAR(gpu_ce, cpu_ce, kFp32Tolerance * std::abs(cpu_ce));
  expect_close(grad, kFp32Tolerance, "cross-entropy grad");
}

TEST_F(CudaVsCpu, OptimizerUpdatesMatchOverThreeSteps) {
  Pair param = make(40, 50, 34), velocity = make(40, 50, 35, 0.0f, 0.0f);
  Pair adam_param = make(40, 50, 36), m = make(40, 50, 37, 0.0f, 0.0f), v = make(40, 50, 38, 0.0f, 0.0f);
  SgdHyper sgd{0.1f, 0.9f, 0.01f};
  AdamWHyper adamw{1e-2f, 0.9f, 0.999f, 1e-8f, 0.1f};
  for (int step = 1; step <= 3; ++step) {
    Pair grad = make(40, 50, 100 + step);
    cpu_.sgd_update(sgd, grad.cpu, velocity.cpu, param.cpu);
    gpu_->sgd_update(sgd, grad.gpu, velocity.gpu, param.gpu);
    cpu_.adamw_update(adamw, step, grad.cpu, m.cpu, v.cpu, adam_param.cpu);
    gpu_->adamw_update(adamw, step, grad.gpu, m.gpu, v.gpu, adam_param.gpu);
  }
  expect_close(param, kFp32Tolerance, "sgd param");
  expect_close(velocity, kFp32Tolerance, "sgd velocity");
  expect_close(adam_param, kFp32Tolerance, "adamw param");
  expect_close(v, kFp32Tolerance, "adamw second moment");
}

TEST_F(CudaVsCpu, CopiedTensorsAreIndependentDeviceCopies) {
  Pair a = make(4, 4, 39);
  Tensor copy = a.gpu;  // Tensor's copy constructor clones the CudaBuffer
  gpu_->scale(0.0f, a.gpu);
  EXPECT_EQ(copy.device(), Device::kCuda);
  EXPECT_EQ(download(copy), a.cpu.to_vector());
}

// More tensors than one multi-tensor launch holds (kTensorsPerLaunch = 48 in optimizer.cu), of uneven sizes: some
// span several chunks, one is empty. The list update must match the CPU's per-tensor update to the file's fp32
// tolerance and the CUDA per-tensor kernels exactly (both kernel shapes share one element function).
TEST_F(CudaVsCpu, OptimizerListUpdatesMatchPerTensorUpdatesAcrossLaunchGroups) {
  constexpr int kTensors = 110;
  struct Operands {
    std::vector<Pair> param, state1, state2;  // per tensor; velocity or exp_avg, then exp_avg_sq (AdamW)
  };
  auto shape = [](int i) -> std::pair<int64_t, int64_t> {
    if (i == 57) return {0, 4};
    if (i % 20 == 3) return {130, 257};  // 33410 elements: three chunks
    return {1 + (i * 7) % 13, 1 + (i * 11) % 37};
  };
  auto operands = [&](unsigned seed) {
    Operands o;
    for (int i = 0; i < kTensors; ++i) {
      const auto [rows, cols] = shape(i);
      const unsigned s = seed + 10 * static_cast<unsigned>(i);
      o.param.push_back(make(rows, cols, s));
      o.state1.push_back(make(rows, cols, s + 1));
      o.state2.push_back(make(rows, cols, s + 2, 0.0f, 1.0f));  // a second moment is never negative
    }
    return o;
  };
  // Three copies: CPU per tensor (.cpu of `reference`), CUDA per tensor (.gpu of `reference`), CUDA list (`many`).
  Operands sgd_reference = operands(1000), sgd_many = operands(1000);
  Operands adamw_reference = operands(5000), adamw_many = operands(5000);
  const SgdHyper sgd{0.1f, 0.9f, 0.01f};
  const AdamWHyper adamw{1e-2f, 0.9f, 0.999f, 1e-8f, 0.1f};
  for (int step = 1; step <= 3; ++step) {
    std::vector<Pair> grads;
    for (int i = 0; i < kTensors; ++i) {
      grads.push_back(make(shape(i).first, shape(i).second, 90000 + 1000 * step + static_cast<unsigned>(i)));
    }
    std::vector<SgdSlot> sgd_slots;
    std::vector<AdamWSlot> adamw_slots;
    for (int i = 0; i < kTensors; ++i) {
      cpu_.sgd_update(sgd, grads[i].cpu, sgd_reference.state1[i].cpu, sgd_reference.param[i].cpu);
      gpu_->sgd_update(sgd, grads[i].gpu, sgd_reference.state1[i].gpu, sgd_reference.param[i].gpu);
      sgd_slots.push_back(SgdSlot{&grads[i].gpu, &sgd_many.state1[i].gpu, &sgd_many.param[i].gpu});
      cpu_.adamw_update(adamw, step, grads[i].cpu, adamw_reference.state1[i].cpu, adamw_reference.state2[i].cpu,
                        adamw_reference.param[i].cpu);
      gpu_->adamw_update(adamw, step, grads[i].gpu, adamw_reference.state1[i].gpu, adamw_reference.state2[i].gpu,
                         adamw_reference.param[i].gpu);
      adamw_slots.push_back(AdamWSlot{&grads[i].gpu, &adamw_many.state1[i].gpu, &adamw_many.state2[i].gpu,
                                      &adamw_many.param[i].gpu});
    }
    gpu_->sgd_update_many(sgd, sgd_slots);
    gpu_->adamw_update_many(adamw, step, adamw_slots);
  }
  auto check = [&](const std::vector<Pair>& reference, const std::vector<Pair>& many, const std::string& what) {
    for (int i = 0; i < kTensors; ++i) {
      const std::vector<float> list_result = download(many[i].gpu);
      EXPECT_LE(relative_max_error(reference[i].cpu.to_vector(), list_result), kFp32Tolerance)
          << what << " of tensor " << i << " vs the CPU";
      EXPECT_EQ(download(reference[i].gpu), list_result) << what << " of tensor " << i << " vs per-tensor CUDA";
    }
  };
  check(sgd_reference.param, sgd_many.param, "sgd param");
  check(sgd_reference.state1, sgd_many.state1, "sgd velocity");
  check(adamw_reference.param, adamw_many.param, "adamw param");
  check(adamw_reference.state1, adamw_many.state1, "adamw exp_avg");
  check(adamw_reference.state2, adamw_many.state2, "adamw exp_avg_sq");
  // The CPU halves of the `many` pairs were never updated, so they still hold the start: the list must have moved.
  EXPECT_NE(download(adamw_many.param[3].gpu), adamw_many.param[3].cpu.to_vector());
}

}  // namespace
}  // namespace sluice::kernels
