// The CPU backend's pooling, upsampling and transposed convolution (oneDNN, one sample per call): the same bits on
// 1 to 3 threads and whatever batch a sample arrives in, parameter gradients accumulated in sample order, and
// geometries that are not one refused with kInvalidArgument. (Their values against PyTorch:
// tests/model:field_layers_reference_test.)
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "core/common/error.h"
#include "kernels/cpu/blas_threads.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/parallel_blocks.h"
#include "tests/kernels/random_tensor.h"

namespace sluice::kernels {
namespace {

std::vector<float> values(const Tensor& t) { return std::vector<float>(t.data(), t.data() + t.size()); }

class CpuSamplingTest : public ::testing::Test {
 protected:
  void SetUp() override { host_threads_ = blas_thread_count(); }
  void TearDown() override { set_blas_thread_count(host_threads_); }

  // `compute` on 1, 2 and 3 threads must give the same bits.
  void expect_same_on_every_thread_count(const std::function<std::vector<float>()>& compute) {
    set_blas_thread_count(1);
    const std::vector<float> one = compute();
    for (int threads : {2, 3}) {
      set_blas_thread_count(threads);
      EXPECT_EQ(compute(), one) << threads << " threads";
    }
  }

 private:
  int host_threads_ = 1;
  const SpreadThresholdForTests spread_{0.0};  // these small shapes run on the whole team too
};

TEST_F(CpuSamplingTest, PoolingIsTheSameOnEveryThreadCount) {
  for (PoolMode mode : {PoolMode::kMax, PoolMode::kAvg}) {
    const PoolGeometry g{mode, 3, {8, 6}, {2, 3}};
    const Tensor x = random_tensor(7, g.in_features(), 1);
    const Tensor dy = random_tensor(7, g.out_features(), 2);
    expect_same_on_every_thread_count([&] {
      Tensor y = Tensor::host(7, g.out_features()), dx = Tensor::host(7, g.in_features());
      cpu_backend().pool_forward(g, x, y);
      cpu_backend().pool_backward(g, x, dy, dx);
      std::vector<float> all = values(y), grads = values(dx);
      all.insert(all.end(), grads.begin(), grads.end());
      return all;
    });
  }
}

TEST_F(CpuSamplingTest, UpsamplingIsTheSameOnEveryThreadCount) {
  for (ResampleMode mode : {ResampleMode::kNearest, ResampleMode::kLinear}) {
    const ResampleGeometry g{mode, 2, {3, 4, 5}, {2, 1, 3}};
    const Tensor x = random_tensor(5, g.in_features(), 3);
    const Tensor dy = random_tensor(5, g.out_features(), 4);
    expect_same_on_every_thread_count([&] {
      Tensor y = Tensor::host(5, g.out_features()), dx = Tensor::host(5, g.in_features());
      cpu_backend().resample_forward(g, x, y);
      cpu_backend().resample_backward(g, dy, dx);
      std::vector<float> all = values(y), grads = values(dx);
      all.insert(all.end(), grads.begin(), grads.end());
      return all;
    });
  }
}

// A large field: oneDNN's resampling writes an output of 2^25 elements with non-temporal stores, which faulted
// (SIGSEGV, `sluice plan` of a 2048 x 2048 U-Net) on a tensor whose memory was only 16-byte aligned. Host tensors
// are 64-byte aligned now; every output point is checked (nearest: each input value 4 times).
TEST_F(CpuSamplingTest, UpsamplingALargeFieldWritesEveryPoint) {
  const ResampleGeometry g{ResampleMode::kNearest, 8, {1024, 1024}, {2, 2}};
  Tensor x = Tensor::host(1, g.in_features());
  for (int64_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(i % 1000);
  Tensor y = Tensor::host_uninitialized(1, g.out_features());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(y.data()) % 64, 0u) << "host tensors are 64-byte aligned";
  cpu_backend().resample_forward(g, x, y);
  int64_t wrong = 0;
  for (int64_t c = 0; c < 8; ++c) {
    for (int64_t row = 0; row < 2048; ++row) {
      const float* out = y.data() + (c * 2048 + row) * 2048;
      const float* in = x.data() + (c * 1024 + row / 2) * 1024;
      for (int64_t col = 0; col < 2048; ++col) wrong += out[col] != in[col / 2];
    }
  }
  EXPECT_EQ(wrong, 0);
  Tensor dx = Tensor::host_uninitialized(1, g.in_features());
  cpu_backend().resample_backward(g, y, dx);  // each input point gets its 4 copies back
  EXPECT_EQ(dx.data()[1000 + 7], 4.0f * 7.0f);
}

TEST_F(CpuSamplingTest, TransposedConvolutionGradientsAreAddedInSampleOrder) {
  const DeconvGeometry g{4, 3, {5, 6}, {3, 2}, {2, 2}};
  const Tensor x = random_tensor(9, g.in_features(), 5);
  const Tensor dy = random_tensor(9, g.out_features(), 6);
  const Tensor weight = random_tensor(g.in_channels, g.weight_cols(), 7);
  const Tensor bias = random_tensor(1, g.out_channels, 8);
  expect_same_on_every_thread_count([&] {
    Tensor y = Tensor::host(9, g.out_features()), dx = Tensor::host(9, g.in_features());
    Tensor weight_grad = random_tensor(g.in_channels, g.weight_cols(), 9), bias_grad = random_tensor(1, 3, 10);
    cpu_backend().deconv_forward(g, x, weight, &bias, y);
    cpu_backend().deconv_backward_data(g, dy, weight, dx);
    cpu_backend().deconv_accumulate_param_grads(g, x, dy, weight_grad, &bias_grad);
    std::vector<float> all = values(y);
    for (const Tensor* t : {&dx, &weight_grad, &bias_grad}) {
      const std::vector<float> more = values(*t);
      all.insert(all.end(), more.begin(), more.end());
    }
    return all;
  });
  // A sample's output does not depend on the batch it arrives in: sample 4 alone gives row 4's bits.
  Tensor all = Tensor::host(9, g.out_features()), one = Tensor::host(1, g.out_features());
  cpu_backend().deconv_forward(g, x, weight, &bias, all);
  std::vector<float> row(x.data() + 4 * g.in_features(), x.data() + 5 * g.in_features());
  cpu_backend().deconv_forward(g, Tensor::host_from(1, g.in_features(), row), weight, &bias, one);
  EXPECT_EQ(values(one), std::vector<float>(all.data() + 4 * g.out_features(), all.data() + 5 * g.out_features()));
}

TEST_F(CpuSamplingTest, GeometriesThatAreNotOneAreRefused) {
  const PoolGeometry odd{PoolMode::kMax, 2, {7}, {2}};
  Tensor x = Tensor::host(1, 14), y = Tensor::host(1, 6);
  try {
    cpu_backend().pool_forward(odd, x, y);
    ADD_FAILURE() << "accepted a pool kernel that does not divide the extent";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("pool kernel 2 does not divide extent 7"), std::string::npos) << e.what();
  }
  const ResampleGeometry zero{ResampleMode::kLinear, 2, {4}, {0}};
  EXPECT_THROW(cpu_backend().resample_forward(zero, Tensor::host(1, 8), y), Error);
  const DeconvGeometry g{2, 3, {4}, {2}, {2}};
  Tensor wrong_weight = Tensor::host(3, 4);
  Tensor out = Tensor::host(1, g.out_features());
  EXPECT_THROW(cpu_backend().deconv_forward(g, Tensor::host(1, 8), wrong_weight, nullptr, out), Error);
}

}  // namespace
}  // namespace sluice::kernels
