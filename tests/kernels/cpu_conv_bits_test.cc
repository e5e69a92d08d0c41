// The CPU convolutions' bits depend on neither the rank's thread count nor the batch a sample travels in: each
// sample is one oneDNN call on one thread, and the weight gradient adds per-sample partials in sample order. So the
// pipelined run, the sequential reference, predict on any batch size and a resume on other cores agree bit for bit.
// Also: the argument checks name what is wrong, and explicit padding's backward is the adjoint of its forward.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "kernels/cpu/blas_threads.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/parallel_blocks.h"
#include "tests/kernels/random_tensor.h"

namespace sluice::kernels {
namespace {

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && std::memcmp(a.data(), b.data(), a.bytes()) == 0;
}

ConvGeometry geometry(int64_t groups = 1) {
  ConvGeometry g;
  g.in_channels = 4;
  g.out_channels = 6;
  g.groups = groups;
  g.in = {12, 10};
  g.kernel = {3, 3};
  g.stride = {1, 2};
  g.dilation = {1, 1};
  g.pad_low = {1, 1};
  g.pad_high = {1, 1};
  complete_conv_geometry(g);
  return g;
}

struct Results {
  Tensor y, dx, weight_grad, bias_grad;
};

Results run_all(const ConvGeometry& g, const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& dy) {
  Backend& backend = cpu_backend();
  Results r{backend.zeros(x.rows(), g.out_features()), backend.zeros(x.rows(), g.in_features()),
            backend.zeros(g.out_channels, g.weight_cols()), backend.zeros(1, g.out_channels)};
  backend.conv_forward(g, x, weight, &bias, r.y);
  backend.conv_backward_data(g, dy, weight, r.dx);
  backend.conv_accumulate_param_grads(g, x, dy, r.weight_grad, &r.bias_grad);
  return r;
}

class CpuConvBits : public ::testing::Test {
 protected:
  void SetUp() override { host_threads_ = blas_thread_count(); }
  void TearDown() override { set_blas_thread_count(host_threads_); }
  int host_threads_ = 1;
  const SpreadThresholdForTests spread_{0.0};  // these small shapes run on the whole team too
};

TEST_F(CpuConvBits, TheThreadCountDoesNotChangeABit) {
  for (int64_t groups : {1, 2}) {
    const ConvGeometry g = geometry(groups);
    const Tensor x = random_tensor(7, g.in_features(), 1), weight = random_tensor(g.out_channels, g.weight_cols(), 2),
                 bias = random_tensor(1, g.out_channels, 3), dy = random_tensor(7, g.out_features(), 4);
    set_blas_thread_count(1);
    const Results one = run_all(g, x, weight, bias, dy);
    for (int threads : {2, 3}) {
      set_blas_thread_count(threads);
      const Results many = run_all(g, x, weight, bias, dy);
      EXPECT_TRUE(same_bits(one.y, many.y)) << threads << " threads, groups " << groups;
      EXPECT_TRUE(same_bits(one.dx, many.dx)) << threads << " threads, groups " << groups;
      EXPECT_TRUE(same_bits(one.weight_grad, many.weight_grad)) << threads << " threads, groups " << groups;
      EXPECT_TRUE(same_bits(one.bias_grad, many.bias_grad)) << threads << " threads, groups " << groups;
    }
  }
}

TEST_F(CpuConvBits, ASampleGivesTheSameBitsInAnyBatch) {
  const ConvGeometry g = geometry();
  const Tensor x = random_tensor(5, g.in_features(), 5), weight = random_tensor(g.out_channels, g.weight_cols(), 6),
               bias = random_tensor(1, g.out_channels, 7);
  Tensor whole = cpu_backend().zeros(5, g.out_features());
  cpu_backend().conv_forward(g, x, weight, &bias, whole);
  for (int64_t n = 0; n < 5; ++n) {
    const Tensor one = Tensor::host_from(1, g.in_features(),
                                         std::vector<float>(x.data() + n * g.in_features(),
                                                            x.data() + (n + 1) * g.in_features()));
    Tensor y = cpu_backend().zeros(1, g.out_features());
    cpu_backend().conv_forward(g, one, weight, &bias, y);
    EXPECT_EQ(0, std::memcmp(y.data(), whole.data() + n * g.out_features(), y.bytes())) << "sample " << n;
  }
}

// <pad_forward(x), v> == <x, pad_backward(v)> for random x and v, in both modes and 1 to 3 dimensions.
TEST(CpuPad, BackwardIsTheAdjointOfForward) {
  for (PadMode mode : {PadMode::kPeriodic, PadMode::kReflect}) {
    for (const std::vector<int64_t>& in : {std::vector<int64_t>{7}, {5, 6}, {3, 4, 5}}) {
      PadGeometry p{mode, 2, in, std::vector<int64_t>(in.size(), 2), std::vector<int64_t>(in.size(), 1)};
      const Tensor x = random_tensor(3, p.in_features(), 8), v = random_tensor(3, p.out_features(), 9);
      Tensor y = cpu_backend().zeros(3, p.out_features()), back = cpu_backend().zeros(3, p.in_features());
      cpu_backend().pad_forward(p, x, y);
      cpu_backend().pad_backward(p, v, back);
      double left = 0.0, right = 0.0;
      for (int64_t i = 0; i < y.size(); ++i) left += static_cast<double>(y.data()[i]) * v.data()[i];
      for (int64_t i = 0; i < x.size(); ++i) right += static_cast<double>(x.data()[i]) * back.data()[i];
      EXPECT_NEAR(left, right, 1e-4) << (mode == PadMode::kPeriodic ? "periodic " : "reflect ") << in.size() << "-D";
    }
  }
}

std::string refusal(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    return e.what();
  }
  return "accepted";
}

TEST(CpuConvArguments, MistakesAreNamed) {
  const ConvGeometry g = geometry();
  const Tensor x = random_tensor(2, g.in_features(), 1), weight = random_tensor(g.out_channels, g.weight_cols(), 2);
  Tensor y = cpu_backend().zeros(2, g.out_features());
  const Tensor narrow = random_tensor(2, g.in_features() - 1, 3);
  EXPECT_NE(refusal([&] { cpu_backend().conv_forward(g, narrow, weight, nullptr, y); }).find("conv_forward: x"),
            std::string::npos);
  const Tensor wrong_weight = random_tensor(g.out_channels + 1, g.weight_cols(), 2);
  EXPECT_NE(refusal([&] { cpu_backend().conv_forward(g, x, wrong_weight, nullptr, y); }).find("weight"),
            std::string::npos);
  ConvGeometry stale = g;
  stale.kernel = {5, 5};  // out no longer follows
  EXPECT_NE(refusal([&] { cpu_backend().conv_forward(stale, x, weight, nullptr, y); }).find("output extents"),
            std::string::npos);
  PadGeometry wide{PadMode::kReflect, 4, {12, 10}, {12, 1}, {1, 1}};
  Tensor padded = cpu_backend().zeros(2, 4 * 25 * 12);
  EXPECT_NE(refusal([&] { cpu_backend().pad_forward(wide, x, padded); }).find("reflect padding 12+1"),
            std::string::npos);
}

}  // namespace
}  // namespace sluice::kernels
