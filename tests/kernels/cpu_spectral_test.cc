// The CPU backend's spectral convolution (FFTW, kernels/cpu/cpu_spectral.cc): the same bits on 1 to 3 threads and
// whatever batch a sample arrives in, the weight gradient accumulated in sample order (a batch split in two gives
// the whole batch's bits), and geometries that are not one refused with kInvalidArgument naming the op. (Its values
// against PyTorch: tests/model:field_layers_reference_test.)
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/common/error.h"
#include "kernels/cpu/blas_threads.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/parallel_blocks.h"
#include "tests/kernels/random_tensor.h"

namespace sluice::kernels {
namespace {

std::vector<float> values(const Tensor& t) { return std::vector<float>(t.data(), t.data() + t.size()); }

// Rows [first, first + count) of `t` as a tensor of their own.
Tensor rows_of(const Tensor& t, int64_t first, int64_t count) {
  const std::vector<float> all = values(t);
  return Tensor::host_from(count, t.cols(),
                           std::vector<float>(all.begin() + first * t.cols(), all.begin() + (first + count) * t.cols()));
}

// 1-, 2- and 3-D, with the last dimension's Nyquist mode kept in one and 2·m = n in another.
std::vector<SpectralGeometry> geometries() {
  return {{3, 2, {12}, {7}}, {2, 3, {6, 10}, {3, 4}}, {2, 2, {4, 5, 6}, {1, 2, 4}}};
}

class CpuSpectralTest : public ::testing::Test {
 protected:
  void SetUp() override { host_threads_ = blas_thread_count(); }
  void TearDown() override { set_blas_thread_count(host_threads_); }

  // y, dx and the weight gradient of `rows` samples.
  static std::vector<float> all_three(const SpectralGeometry& g, const Tensor& x, const Tensor& dy,
                                      const Tensor& weight) {
    Tensor y = Tensor::host(x.rows(), g.out_features()), dx = Tensor::host(x.rows(), g.in_features());
    Tensor weight_grad = Tensor::host(g.in_channels, g.weight_cols());
    cpu_backend().spectral_conv_forward(g, x, weight, y);
    cpu_backend().spectral_conv_backward_data(g, dy, weight, dx);
    cpu_backend().spectral_conv_accumulate_weight_grad(g, x, dy, weight_grad);
    std::vector<float> all = values(y), more = values(dx), grads = values(weight_grad);
    all.insert(all.end(), more.begin(), more.end());
    all.insert(all.end(), grads.begin(), grads.end());
    return all;
  }

 private:
  int host_threads_ = 1;
  const SpreadThresholdForTests spread_{0.0};  // these small shapes run on the whole team too
};

TEST_F(CpuSpectralTest, TheSameOnEveryThreadCount) {
  for (const SpectralGeometry& g : geometries()) {
    SCOPED_TRACE(g.describe());
    const Tensor x = random_tensor(7, g.in_features(), 1), dy = random_tensor(7, g.out_features(), 2);
    const Tensor weight = random_tensor(g.in_channels, g.weight_cols(), 3);
    set_blas_thread_count(1);
    const std::vector<float> one = all_three(g, x, dy, weight);
    for (int threads : {2, 3}) {
      set_blas_thread_count(threads);
      EXPECT_EQ(all_three(g, x, dy, weight), one) << threads << " threads";
    }
  }
}

// A sample's y and dx do not depend on its batch; the weight gradient of the batch split in two (first 3 samples,
// then 4, as two micro-batches) has the whole batch's bits.
TEST_F(CpuSpectralTest, SamplesAndTheGradientDoNotDependOnTheSplit) {
  set_blas_thread_count(2);
  for (const SpectralGeometry& g : geometries()) {
    SCOPED_TRACE(g.describe());
    const Tensor x = random_tensor(7, g.in_features(), 4), dy = random_tensor(7, g.out_features(), 5);
    const Tensor weight = random_tensor(g.in_channels, g.weight_cols(), 6);
    Tensor y = Tensor::host(7, g.out_features()), whole = Tensor::host(g.in_channels, g.weight_cols());
    cpu_backend().spectral_conv_forward(g, x, weight, y);
    cpu_backend().spectral_conv_accumulate_weight_grad(g, x, dy, whole);
    for (int64_t n = 0; n < 7; ++n) {
      Tensor one = Tensor::host(1, g.out_features());
      cpu_backend().spectral_conv_forward(g, rows_of(x, n, 1), weight, one);
      EXPECT_EQ(values(one), values(rows_of(y, n, 1))) << "sample " << n;
    }
    Tensor split = Tensor::host(g.in_channels, g.weight_cols());
    cpu_backend().spectral_conv_accumulate_weight_grad(g, rows_of(x, 0, 3), rows_of(dy, 0, 3), split);
    cpu_backend().spectral_conv_accumulate_weight_grad(g, rows_of(x, 3, 4), rows_of(dy, 3, 4), split);
    EXPECT_EQ(values(split), values(whole));
  }
}

TEST_F(CpuSpectralTest, GeometriesThatAreNotOneAreRefused) {
  const std::vector<std::pair<SpectralGeometry, std::string>> bad = {
      {{2, 2, {8, 8}, {5, 3}}, "do not fit extent 8"},  // 2·5 > 8
      {{2, 2, {8, 8}, {4, 6}}, "do not fit extent 8"},  // 6 > 8/2 + 1
      {{2, 2, {8, 8}, {4}}, "one modes value per spatial dimension"},
      {{2, 2, {}, {}}, "1 to 3 spatial dimensions"},
  };
  for (const auto& [g, message] : bad) {
    Tensor x = Tensor::host(1, std::max<int64_t>(1, g.in_features()));
    Tensor weight = Tensor::host(1, 1), y = Tensor::host(1, 1);
    try {
      cpu_backend().spectral_conv_forward(g, x, weight, y);
      ADD_FAILURE() << "accepted " << message;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("spectral_conv_forward"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

// A backend without the spectral ops (the CPU and CUDA backends both have them): the Backend defaults, which refuse with
// kUnsupported naming the op and the device.
class WithoutSpectralOps : public CpuBackend {
 public:
  std::string device_name() const override { return "fake:1"; }

 protected:
  void spectral_conv_forward_impl(const SpectralGeometry& g, const Tensor& x, const Tensor& w, Tensor& y) override {
    Backend::spectral_conv_forward_impl(g, x, w, y);
  }
  void spectral_conv_backward_data_impl(const SpectralGeometry& g, const Tensor& dy, const Tensor& w,
                                        Tensor& dx) override {
    Backend::spectral_conv_backward_data_impl(g, dy, w, dx);
  }
  void spectral_conv_accumulate_weight_grad_impl(const SpectralGeometry& g, const Tensor& x, const Tensor& dy,
                                                 Tensor& dw) override {
    Backend::spectral_conv_accumulate_weight_grad_impl(g, x, dy, dw);
  }
};

TEST_F(CpuSpectralTest, ABackendWithoutTheOpsRefusesThemNamingOpAndDevice) {
  WithoutSpectralOps backend;
  const SpectralGeometry g{2, 3, {8}, {3}};
  Tensor x = Tensor::host(2, g.in_features()), y = Tensor::host(2, g.out_features());
  Tensor w = Tensor::host(g.in_channels, g.weight_cols());
  const std::vector<std::pair<std::string, std::function<void()>>> ops = {
      {"spectral_conv_forward", [&] { backend.spectral_conv_forward(g, x, w, y); }},
      {"spectral_conv_backward_data", [&] { backend.spectral_conv_backward_data(g, y, w, x); }},
      {"spectral_conv_accumulate_weight_grad", [&] { backend.spectral_conv_accumulate_weight_grad(g, x, y, w); }},
  };
  for (const auto& [name, op] : ops) {
    try {
      op();
      ADD_FAILURE() << name << " ran";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
      EXPECT_NE(std::string(e.what()).find(name + " is not available on fake:1"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace sluice::kernels
