// CudaBackend's field ops (cuDNN convolution, transposed convolution and pooling; the padding, upsampling, norm,
// per-point cross-entropy and column-block kernels) against
// the CpuBackend's (oneDNN) on the same random inputs: 1-D, 2-D and 3-D, stride, dilation, groups, asymmetric
// padding; parameter gradients must ADD to what the gradient tensors hold. And the determinism rule: the same ops
// on a fresh backend (a new cuDNN handle, algorithms chosen again by the heuristics) give the same bits.
// Skips with the reason when there is no GPU (fails instead when SLUICE_REQUIRE_CUDA is set).
//
// Tolerances (relative to the tensor's scale, relative_max_error):
// - convolutions 1e-4: the GPU computes in fp32 without TF32 (CUDNN_FMA_MATH), so only the order of the sums
//   differs from oneDNN's for the implicit-GEMM algorithms (about 1e-6 on these sizes); but the heuristics may pick
//   a Winograd or FFT algorithm, which transforms the operands and is documented by cuDNN as less accurate in
//   fp32 (errors around 1e-5 relative). 1e-4 still fails any wrong index, padding or missing accumulation, which
//   move results by O(1) of the scale. Not yet measured on a GPU (written on a machine without one).
// - pooling and upsampling 1e-6: max pooling and nearest upsampling select elements (exact); an average divides a
//   sum of at most 27 terms; linear upsampling mixes at most 8 terms with weights computed in fp32 (a few ulps).
// - group norm and layernorm over channels 1e-5: statistics in double on both, summed in another order, so the
//   float mean and rstd may differ in the last bit, which the backward's differences of similar terms amplify a
//   little; a wrong set, channel or missing accumulation is off by O(1).
// - column copies and periodic/reflect padding: bit-identical (copies; the padding's backward adds in the CPU's
//   order).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/cuda/cuda_backend.h"
#include "tests/cuda/cuda_op_test_support.h"
#include "tests/cuda/cuda_test_support.h"

namespace sluice::kernels {
namespace {

using sluice::testing::download;
using sluice::testing::Outputs;
using sluice::testing::random_values;
using sluice::testing::relative_max_error;

constexpr double kConvTolerance = 1e-4;
constexpr double kPoolTolerance = 1e-6;
constexpr double kNormTolerance = 1e-5;
constexpr int64_t kSamples = 3;

ConvGeometry conv(int64_t in_channels, int64_t out_channels, int64_t groups, std::vector<int64_t> in,
                  std::vector<int64_t> kernel, std::vector<int64_t> stride, std::vector<int64_t> dilation,
                  std::vector<int64_t> pad_low, std::vector<int64_t> pad_high) {
  ConvGeometry g;
  g.in_channels = in_channels;
  g.out_channels = out_channels;
  g.groups = groups;
  g.in = std::move(in);
  g.kernel = std::move(kernel);
  g.stride = std::move(stride);
  g.dilation = std::move(dilation);
  g.pad_low = std::move(pad_low);
  g.pad_high = std::move(pad_high);
  complete_conv_geometry(g);
  return g;
}

// 1-D, 2-D and 3-D; stride, dilation, groups (depthwise too); symmetric, asymmetric ('same' with an even kernel)
// and no padding.
std::vector<ConvGeometry> conv_cases() {
  return {
      conv(3, 4, 1, {17}, {5}, {2}, {2}, {4}, {4}),
      conv(4, 6, 2, {9, 11}, {3, 3}, {1, 2}, {1, 1}, {1, 1}, {1, 1}),
      conv(3, 5, 1, {8, 7}, {4, 2}, {1, 1}, {1, 1}, {1, 0}, {2, 1}),
      conv(2, 3, 1, {10}, {4}, {1}, {3}, {4}, {5}),
      conv(4, 4, 4, {5, 6, 7}, {3, 2, 3}, {2, 1, 1}, {1, 2, 1}, {1, 0, 1}, {1, 0, 1}),
      conv(2, 4, 1, {4, 5, 6}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}),
  };
}

std::vector<DeconvGeometry> deconv_cases() {
  return {{3, 2, {7}, {3}, {2}}, {4, 3, {5, 6}, {3, 2}, {2, 2}}, {2, 3, {3, 4, 2}, {2, 2, 3}, {2, 1, 3}}};
}

std::vector<PoolGeometry> pool_cases() {
  std::vector<PoolGeometry> cases;
  for (PoolMode mode : {PoolMode::kMax, PoolMode::kAvg}) {
    cases.push_back({mode, 3, {12}, {3}});
    cases.push_back({mode, 2, {8, 6}, {2, 3}});
    cases.push_back({mode, 2, {6, 4, 9}, {3, 2, 3}});
  }
  return cases;
}

// conv forward (with bias), backward data, and parameter gradients added to nonzero starting values.
Outputs run_conv(Backend& b, const ConvGeometry& g, unsigned seed) {
  const auto upload = [&](int64_t rows, int64_t cols, unsigned s) {
    const std::vector<float> v = random_values(rows * cols, s);
    return b.from_host(rows, cols, v.data());
  };
  const Tensor x = upload(kSamples, g.in_features(), seed);
  const Tensor weight = upload(g.out_channels, g.weight_cols(), seed + 1);
  const Tensor bias = upload(1, g.out_channels, seed + 2);
  const Tensor dy = upload(kSamples, g.out_features(), seed + 3);
  Tensor weight_grad = upload(g.out_channels, g.weight_cols(), seed + 4);
  Tensor bias_grad = upload(1, g.out_channels, seed + 5);
  Tensor y = b.zeros(kSamples, g.out_features());
  Tensor dx = b.zeros(kSamples, g.in_features());
  b.conv_forward(g, x, weight, &bias, y);
  b.conv_backward_data(g, dy, weight, dx);
  b.conv_accumulate_param_grads(g, x, dy, weight_grad, &bias_grad);
  return download(b, {{"y", &y}, {"dx", &dx}, {"weight_grad", &weight_grad}, {"bias_grad", &bias_grad}});
}

Outputs run_deconv(Backend& b, const DeconvGeometry& g, unsigned seed) {
  const auto upload = [&](int64_t rows, int64_t cols, unsigned s) {
    const std::vector<float> v = random_values(rows * cols, s);
    return b.from_host(rows, cols, v.data());
  };
  const Tensor x = upload(kSamples, g.in_features(), seed);
  const Tensor weight = upload(g.in_channels, g.weight_cols(), seed + 1);
  const Tensor bias = upload(1, g.out_channels, seed + 2);
  const Tensor dy = upload(kSamples, g.out_features(), seed + 3);
  Tensor weight_grad = upload(g.in_channels, g.weight_cols(), seed + 4);
  Tensor bias_grad = upload(1, g.out_channels, seed + 5);
  Tensor y = b.zeros(kSamples, g.out_features());
  Tensor dx = b.zeros(kSamples, g.in_features());
  b.deconv_forward(g, x, weight, &bias, y);
  b.deconv_backward_data(g, dy, weight, dx);
  b.deconv_accumulate_param_grads(g, x, dy, weight_grad, &bias_grad);
  return download(b, {{"y", &y}, {"dx", &dx}, {"weight_grad", &weight_grad}, {"bias_grad", &bias_grad}});
}

Outputs run_pool(Backend& b, const PoolGeometry& g, unsigned seed) {
  const std::vector<float> xv = random_values(kSamples * g.in_features(), seed);
  const std::vector<float> dyv = random_values(kSamples * g.out_features(), seed + 1);
  const Tensor x = b.from_host(kSamples, g.in_features(), xv.data());
  const Tensor dy = b.from_host(kSamples, g.out_features(), dyv.data());
  Tensor y = b.zeros(kSamples, g.out_features());
  Tensor dx = b.from_host(kSamples, g.in_features(), xv.data());  // overwritten, not added to
  b.pool_forward(g, x, y);
  b.pool_backward(g, x, dy, dx);
  return download(b, {{"y", &y}, {"dx", &dx}});
}

Outputs run_resample(Backend& b, const ResampleGeometry& g, unsigned seed) {
  const std::vector<float> xv = random_values(kSamples * g.in_features(), seed);
  const std::vector<float> dyv = random_values(kSamples * g.out_features(), seed + 1);
  const Tensor x = b.from_host(kSamples, g.in_features(), xv.data());
  const Tensor dy = b.from_host(kSamples, g.out_features(), dyv.data());
  Tensor y = b.zeros(kSamples, g.out_features());
  Tensor dx = b.from_host(kSamples, g.in_features(), xv.data());  // overwritten, not added to
  b.resample_forward(g, x, y);
  b.resample_backward(g, dy, dx);
  return download(b, {{"y", &y}, {"dx", &dx}});
}

Outputs run_pad(Backend& b, const PadGeometry& g, unsigned seed) {
  const std::vector<float> xv = random_values(kSamples * g.in_features(), seed);
  const std::vector<float> dyv = random_values(kSamples * g.out_features(), seed + 1);
  const Tensor x = b.from_host(kSamples, g.in_features(), xv.data());
  const Tensor dy = b.from_host(kSamples, g.out_features(), dyv.data());
  Tensor y = b.zeros(kSamples, g.out_features());
  Tensor dx = b.from_host(kSamples, g.in_features(), xv.data());  // overwritten, not added to
  b.pad_forward(g, x, y);
  b.pad_backward(g, dy, dx);
  return download(b, {{"y", &y}, {"dx", &dx}});
}

// Group norm (per_point false) or layernorm over the channels at each point: forward, backward input, and the
// parameter gradients added to nonzero starting values.
Outputs run_norm(Backend& b, const NormGeometry& g, bool per_point, unsigned seed) {
  const auto upload = [&](int64_t rows, int64_t cols, unsigned s) {
    const std::vector<float> v = random_values(rows * cols, s);
    return b.from_host(rows, cols, v.data());
  };
  const int64_t stats = per_point ? g.points : g.groups;
  const Tensor x = upload(kSamples, g.features(), seed);
  const Tensor weight = upload(1, g.channels, seed + 1);
  const Tensor bias = upload(1, g.channels, seed + 2);
  const Tensor dy = upload(kSamples, g.features(), seed + 3);
  Tensor weight_grad = upload(1, g.channels, seed + 4);
  Tensor bias_grad = upload(1, g.channels, seed + 5);
  Tensor y = b.zeros(kSamples, g.features()), dx = b.zeros(kSamples, g.features());
  Tensor mean = b.zeros(kSamples, stats), rstd = b.zeros(kSamples, stats);
  if (per_point) {
    b.channel_layernorm_forward(g, x, weight, bias, y, mean, rstd);
    b.channel_layernorm_backward_input(g, dy, x, weight, mean, rstd, dx);
    b.channel_layernorm_accumulate_param_grads(g, dy, x, mean, rstd, weight_grad, bias_grad);
  } else {
    b.group_norm_forward(g, x, weight, bias, y, mean, rstd);
    b.group_norm_backward_input(g, dy, x, weight, mean, rstd, dx);
    b.group_norm_accumulate_param_grads(g, dy, x, mean, rstd, weight_grad, bias_grad);
  }
  return download(b, {{"y", &y}, {"mean", &mean}, {"rstd", &rstd}, {"dx", &dx}, {"weight_grad", &weight_grad},
                      {"bias_grad", &bias_grad}});
}

std::vector<NormGeometry> norm_cases() {
  // channels, groups, points, eps: group norm, instance norm (groups = channels), one point, a big set (600
  // elements: more than a block's threads, so each thread sums several).
  return {{4, 2, 12, 1e-5f}, {3, 3, 20, 1e-5f}, {6, 1, 1, 1e-3f}, {8, 2, 150, 1e-5f}};
}

void expect_close(const Outputs& cpu, const Outputs& gpu, double tolerance, const std::string& what) {
  ASSERT_EQ(cpu.values.size(), gpu.values.size()) << what;
  for (size_t i = 0; i < cpu.values.size(); ++i) {
    EXPECT_LE(relative_max_error(cpu.values[i], gpu.values[i]), tolerance) << what << ": " << cpu.names[i];
  }
}

void expect_identical(const Outputs& first, const Outputs& second, const std::string& what) {
  ASSERT_EQ(first.values.size(), second.values.size()) << what;
  for (size_t i = 0; i < first.values.size(); ++i) {
    const std::vector<float>& a = first.values[i];
    const std::vector<float>& b = second.values[i];
    ASSERT_EQ(a.size(), b.size()) << what << ": " << first.names[i];
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0)
        << what << ": " << first.names[i] << " differs between two runs";
  }
}

class CudaFieldOps : public testing::CpuAndCudaBackends {};

TEST_F(CudaFieldOps, ConvolutionMatchesTheCpuIn1d2d3dWithStrideDilationGroupsAndPadding) {
  unsigned seed = 10;
  for (const ConvGeometry& g : conv_cases()) {
    expect_close(run_conv(cpu_, g, seed), run_conv(*gpu_, g, seed), kConvTolerance, g.describe());
    seed += 10;
  }
}

TEST_F(CudaFieldOps, TransposedConvolutionMatchesTheCpu) {
  unsigned seed = 100;
  for (const DeconvGeometry& g : deconv_cases()) {
    expect_close(run_deconv(cpu_, g, seed), run_deconv(*gpu_, g, seed), kConvTolerance, g.describe());
    seed += 10;
  }
}

TEST_F(CudaFieldOps, MaxAndAveragePoolingMatchTheCpu) {
  unsigned seed = 200;
  for (const PoolGeometry& g : pool_cases()) {
    expect_close(run_pool(cpu_, g, seed), run_pool(*gpu_, g, seed), kPoolTolerance, g.describe());
    seed += 10;
  }
}

// The same op sequence on two backends (each its own cuDNN handle, workspace and algorithm choices) gives the same
// bits: algorithms come from the heuristics filtered to CUDNN_DETERMINISTIC, never from timings.
TEST_F(CudaFieldOps, TwoRunsOnFreshBackendsAreBitwiseEqual) {
  CudaBackend second(0);
  unsigned seed = 300;
  for (const ConvGeometry& g : conv_cases()) {
    expect_identical(run_conv(*gpu_, g, seed), run_conv(second, g, seed), g.describe());
  }
  for (const DeconvGeometry& g : deconv_cases()) {
    expect_identical(run_deconv(*gpu_, g, seed), run_deconv(second, g, seed), g.describe());
  }
  for (const PoolGeometry& g : pool_cases()) {
    expect_identical(run_pool(*gpu_, g, seed), run_pool(second, g, seed), g.describe());
  }
  for (const NormGeometry& g : norm_cases()) {
    for (bool per_point : {false, true}) {
      expect_identical(run_norm(*gpu_, g, per_point, seed), run_norm(second, g, per_point, seed), g.describe());
    }
  }
  const ResampleGeometry linear{ResampleMode::kLinear, 2, {3, 4, 2}, {2, 1, 3}};
  expect_identical(run_resample(*gpu_, linear, seed), run_resample(second, linear, seed), linear.describe());
}

// A bigger batch, where cuDNN's backward-filter has many samples to sum (the non-deterministic algorithms use
// atomics across them), repeated on the same backend: the weight gradient must be the same bits every time.
TEST_F(CudaFieldOps, WeightGradientOverManySamplesIsTheSameEveryTime) {
  const ConvGeometry g = conv(8, 16, 1, {32, 32}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1});
  const int64_t samples = 64;
  const std::vector<float> xv = random_values(samples * g.in_features(), 400);
  const std::vector<float> dyv = random_values(samples * g.out_features(), 401);
  const Tensor x = gpu_->from_host(samples, g.in_features(), xv.data());
  const Tensor dy = gpu_->from_host(samples, g.out_features(), dyv.data());
  std::vector<float> first;
  for (int run = 0; run < 3; ++run) {
    Tensor weight_grad = gpu_->zeros(g.out_channels, g.weight_cols());
    Tensor bias_grad = gpu_->zeros(1, g.out_channels);
    gpu_->conv_accumulate_param_grads(g, x, dy, weight_grad, &bias_grad);
    const Outputs out = download(*gpu_, {{"weight_grad", &weight_grad}, {"bias_grad", &bias_grad}});
    std::vector<float> all = out.values[0];
    all.insert(all.end(), out.values[1].begin(), out.values[1].end());
    if (run == 0) {
      first = all;
    } else {
      EXPECT_EQ(std::memcmp(first.data(), all.data(), all.size() * sizeof(float)), 0) << "run " << run;
    }
  }
}

// Nearest and linear (align_corners=False), 1-D to 3-D, factors 1 to 4, extents of 1 (every output clamped).
TEST_F(CudaFieldOps, NearestAndLinearUpsamplingMatchTheCpu) {
  unsigned seed = 700;
  for (ResampleMode mode : {ResampleMode::kNearest, ResampleMode::kLinear}) {
    const std::vector<ResampleGeometry> cases = {
        {mode, 3, {7}, {3}}, {mode, 2, {4, 5}, {2, 3}}, {mode, 2, {1, 4}, {4, 1}}, {mode, 2, {3, 4, 2}, {2, 1, 3}}};
    for (const ResampleGeometry& g : cases) {
      expect_close(run_resample(cpu_, g, seed), run_resample(*gpu_, g, seed), kPoolTolerance, g.describe());
      seed += 10;
    }
  }
}

// Every padding the layers make: periodic up to the whole extent (each element copied up to 3 times per
// dimension), reflect up to extent − 1, uneven sides, 1-D to 3-D.
TEST_F(CudaFieldOps, PeriodicAndReflectPaddingAreTheCpuBits) {
  const std::vector<PadGeometry> cases = {
      {PadMode::kPeriodic, 2, {5}, {5}, {3}},
      {PadMode::kReflect, 2, {5}, {4}, {1}},
      {PadMode::kPeriodic, 3, {4, 6}, {1, 6}, {2, 0}},
      {PadMode::kReflect, 3, {4, 6}, {3, 2}, {1, 5}},
      {PadMode::kPeriodic, 2, {3, 4, 5}, {3, 1, 2}, {3, 2, 0}},
      {PadMode::kReflect, 2, {3, 4, 5}, {2, 1, 0}, {2, 3, 4}},
  };
  unsigned seed = 600;
  for (const PadGeometry& g : cases) {
    const std::string what = std::string(g.mode == PadMode::kPeriodic ? "periodic" : "reflect") + " pad, " +
                             std::to_string(g.in.size()) + "-D, seed " + std::to_string(seed);
    expect_identical(run_pad(cpu_, g, seed), run_pad(*gpu_, g, seed), what);
    seed += 10;
  }
}

TEST_F(CudaFieldOps, GroupNormAndChannelLayernormMatchTheCpu) {
  unsigned seed = 800;
  for (const NormGeometry& g : norm_cases()) {
    for (bool per_point : {false, true}) {
      const std::string what = (per_point ? "channel layernorm, " : "group norm, ") + g.describe();
      expect_close(run_norm(cpu_, g, per_point, seed), run_norm(*gpu_, g, per_point, seed), kNormTolerance, what);
      seed += 10;
    }
  }
}

// Per-point softmax cross-entropy: the loss sum (double) and the gradient, with targets that are distributions over
// the channels at each point (not one-hot, so Σ_c target ≠ 1 is exercised too) and large logits (the max shift).
TEST_F(CudaFieldOps, PerPointCrossEntropyMatchesTheCpu) {
  const int64_t channels = 5, points = 37;
  std::vector<float> logits = random_values(kSamples * channels * points, 900);
  for (float& v : logits) v *= 30.0f;
  const std::vector<float> target = random_values(kSamples * channels * points, 901);
  std::vector<float> positive(target.size());
  for (size_t i = 0; i < target.size(); ++i) positive[i] = 0.5f * (target[i] + 1.0f);
  auto run = [&](Backend& b, double& loss) {
    const Tensor z = b.from_host(kSamples, channels * points, logits.data());
    const Tensor t = b.from_host(kSamples, channels * points, positive.data());
    Tensor grad = b.zeros(kSamples, channels * points);
    loss = b.channel_softmax_cross_entropy(channels, z, t, 0.25f, grad);
    return download(b, {{"grad", &grad}});
  };
  double cpu_loss = 0.0, gpu_loss = 0.0, again_loss = 0.0;
  const Outputs cpu = run(cpu_, cpu_loss);
  const Outputs gpu = run(*gpu_, gpu_loss);
  expect_close(cpu, gpu, kNormTolerance, "channel_softmax_cross_entropy");
  EXPECT_NEAR(gpu_loss, cpu_loss, 1e-9 * std::abs(cpu_loss));  // double sums of the same float terms
  expect_identical(gpu, run(*gpu_, again_loss), "channel_softmax_cross_entropy run twice");
  EXPECT_EQ(gpu_loss, again_loss);
}

TEST_F(CudaFieldOps, ColumnBlocksCopyAndAddAsOnTheCpu) {
  const std::vector<float> sv = random_values(5 * 9, 500);
  const std::vector<float> dv = random_values(5 * 7, 501);
  for (bool add : {false, true}) {
    Tensor cpu_source = cpu_.from_host(5, 9, sv.data()), cpu_destination = cpu_.from_host(5, 7, dv.data());
    Tensor gpu_source = gpu_->from_host(5, 9, sv.data()), gpu_destination = gpu_->from_host(5, 7, dv.data());
    if (add) {
      cpu_.add_columns(cpu_source, 2, cpu_destination, 1, 4);
      gpu_->add_columns(gpu_source, 2, gpu_destination, 1, 4);
    } else {
      cpu_.copy_columns(cpu_source, 2, cpu_destination, 1, 4);
      gpu_->copy_columns(gpu_source, 2, gpu_destination, 1, 4);
    }
    const Outputs expected = download(cpu_, {{"destination", &cpu_destination}});
    const Outputs actual = download(*gpu_, {{"destination", &gpu_destination}});
    expect_identical(expected, actual, add ? "add_columns" : "copy_columns");
  }
}

}  // namespace
}  // namespace sluice::kernels
