// Exactness by construction for group norm (issue 32, item 3): statistics formed per canonical tile
// (kernels/tiled_norm.h), every tile's sums added in global tile order, give the same bits on the field held whole
// as ONE block as on the blocks of any split (even, uneven, 3-D) put back together: the output, dx and the parameter
// gradients (per-tile partials added in tile order). Group norm and instance norm (groups = channels). The tiled
// results are the backend's plain group norm ops' to within rounding, on a field whose mean is far from zero (the
// variance from per-tile deviations, not a sum of squares minus a squared mean).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "kernels/cpu/blas_threads.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/parallel_blocks.h"
#include "kernels/tiled_norm.h"
#include "tests/kernels/random_tensor.h"
#include "tests/kernels/tiled_norm_split.h"

namespace sluice::kernels {
namespace {

struct Case {
  const char* name;
  std::vector<int64_t> global;
  std::vector<int64_t> tile;
  std::vector<std::vector<int64_t>> cuts;
  int64_t channels = 6;
  int64_t groups = 3;
  int64_t samples = 2;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

int64_t points(const std::vector<int64_t>& extents) { return extent_product(extents); }

struct Inputs {
  Tensor x, dy, weight, bias;
};

Inputs inputs(const Case& c) {
  const int64_t features = c.channels * points(c.global);
  Inputs in{random_tensor(c.samples, features, 1), random_tensor(c.samples, features, 2),
            random_tensor(1, c.channels, 3), random_tensor(1, c.channels, 4)};
  for (int64_t i = 0; i < in.x.size(); ++i) in.x.data()[i] = 40.0f + 0.5f * in.x.data()[i];  // mean far from 0
  return in;
}

using Result = NormSplitResult;

// The field's results from the blocks of `cuts` (tests/kernels/tiled_norm_split.h).
Result run_split(Backend& backend, const Case& c, const std::vector<std::vector<int64_t>>& cuts, const Inputs& in) {
  const NormGeometry norm{c.channels, c.groups, points(c.global), 1e-5f};
  return run_norm_split(backend, norm, c.global, c.tile, cuts, in.x, in.dy, in.weight, in.bias);
}

void expect_bits(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (int64_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(got.data() + i, want.data() + i, sizeof(float)) != 0) {
      FAIL() << what << ": float " << i << " is " << got.data()[i] << ", the one block's " << want.data()[i];
    }
  }
}

void expect_near(const Tensor& got, const Tensor& want, float tolerance, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (int64_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got.data()[i], want.data()[i], tolerance * std::max(1.0f, std::fabs(want.data()[i])))
        << what << " element " << i << " (tiled vs the plain group norm)";
  }
}

class TiledGroupNormTest : public ::testing::TestWithParam<Case> {};

TEST_P(TiledGroupNormTest, EverySplitGivesTheOneBlockBits) {
  const Case& c = GetParam();
  CpuBackend backend;
  const Inputs in = inputs(c);
  std::vector<std::vector<int64_t>> one;
  for (int64_t g : c.global) one.push_back({g});
  const Result whole = run_split(backend, c, one, in);
  const Result split = run_split(backend, c, c.cuts, in);
  expect_bits(split.y, whole.y, "y");
  expect_bits(split.dx, whole.dx, "dx");
  expect_bits(split.weight_grad, whole.weight_grad, "weight gradient");
  expect_bits(split.bias_grad, whole.bias_grad, "bias gradient");
  ASSERT_EQ(split.forward_sums.size(), whole.forward_sums.size());
  EXPECT_EQ(std::memcmp(split.forward_sums.data(), whole.forward_sums.data(), 8 * whole.forward_sums.size()), 0)
      << "the tiles' forward sums";
  ASSERT_EQ(split.backward_sums.size(), whole.backward_sums.size());
  EXPECT_EQ(std::memcmp(split.backward_sums.data(), whole.backward_sums.data(), 8 * whole.backward_sums.size()), 0)
      << "the tiles' backward sums";
}

TEST_P(TiledGroupNormTest, OneBlockIsThePlainGroupNormToRounding) {
  const Case& c = GetParam();
  CpuBackend backend;
  const Inputs in = inputs(c);
  std::vector<std::vector<int64_t>> one;
  for (int64_t g : c.global) one.push_back({g});
  const Result tiled = run_split(backend, c, one, in);
  const NormGeometry norm{c.channels, c.groups, points(c.global), 1e-5f};
  Tensor y = Tensor::host(c.samples, in.x.cols()), dx = Tensor::host(c.samples, in.x.cols());
  Tensor mean = Tensor::host(c.samples, c.groups), rstd = Tensor::host(c.samples, c.groups);
  Tensor weight_grad = Tensor::host(1, c.channels), bias_grad = Tensor::host(1, c.channels);
  backend.group_norm_forward(norm, in.x, in.weight, in.bias, y, mean, rstd);
  backend.group_norm_backward_input(norm, in.dy, in.x, in.weight, mean, rstd, dx);
  backend.group_norm_accumulate_param_grads(norm, in.dy, in.x, mean, rstd, weight_grad, bias_grad);
  // rstd ≈ 3.5 here (x spread ±0.5 around 40): 1e-5 relative to the largest of y, dx and the gradients.
  expect_near(tiled.y, y, 1e-5f, "y");
  expect_near(tiled.dx, dx, 1e-5f, "dx");
  expect_near(tiled.weight_grad, weight_grad, 1e-5f, "weight gradient");
  expect_near(tiled.bias_grad, bias_grad, 1e-5f, "bias gradient");
}

INSTANTIATE_TEST_SUITE_P(
    Splits, TiledGroupNormTest,
    ::testing::Values(Case{"2d_even_2x2", {16, 12}, {4, 4}, {{8, 8}, {4, 8}}},
                      Case{"2d_uneven_2x3", {16, 12}, {4, 4}, {{4, 12}, {4, 4, 4}}},
                      Case{"2d_uneven_instance_norm", {16, 12}, {4, 4}, {{12, 4}, {8, 4}}, 4, 4},
                      Case{"3d_2x1x2", {8, 4, 6}, {2, 2, 2}, {{2, 6}, {4}, {4, 2}}, 4, 2, 1},
                      Case{"1d_uneven", {24}, {3}, {{6, 3, 15}}, 2, 1, 3}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

// The CPU ops share the samples out over the threads: 1 and 3 threads give the same bits.
TEST(TiledGroupNormThreads, TheBitsDoNotDependOnTheThreadCount) {
  const Case c{"2d_uneven_2x3", {16, 12}, {4, 4}, {{4, 12}, {4, 4, 4}}, 6, 3, 5};
  CpuBackend backend;
  const Inputs in = inputs(c);
  const int host_threads = blas_thread_count();
  const SpreadThresholdForTests spread(0.0);  // these small shapes run on the whole team too
  set_blas_thread_count(1);
  const Result one = run_split(backend, c, c.cuts, in);
  set_blas_thread_count(3);
  const Result three = run_split(backend, c, c.cuts, in);
  set_blas_thread_count(host_threads);
  expect_bits(three.y, one.y, "y");
  expect_bits(three.dx, one.dx, "dx");
  expect_bits(three.weight_grad, one.weight_grad, "weight gradient");
  EXPECT_EQ(three.forward_sums, one.forward_sums);
  EXPECT_EQ(three.backward_sums, one.backward_sums);
}

void expect_invalid(const std::function<void()>& call, const std::string& text) {
  try {
    call();
    ADD_FAILURE() << "accepted; expected an error naming " << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(TiledGroupNormChecks, BackendChecksTheNewOpsArguments) {
  CpuBackend backend;
  const NormGeometry g{4, 2, 6, 1e-5f};
  const Tensor x = random_tensor(2, g.features(), 1), w = random_tensor(1, 4, 2), b = random_tensor(1, 4, 3);
  const Tensor stat = Tensor::host(2, 2), wrong = Tensor::host(2, 3);
  Tensor y = Tensor::host(2, g.features());
  expect_invalid([&] { backend.group_norm_partial_sums(g, wrong); }, "group_norm_partial_sums: x");
  NormGeometry bad = g;
  bad.groups = 3;
  expect_invalid([&] { backend.group_norm_partial_sums(bad, x); }, "groups must divide");
  expect_invalid([&] { backend.group_norm_normalize(g, x, w, b, wrong, stat, y); }, "mean");
  expect_invalid([&] { backend.group_norm_backward_partial_sums(g, x, x, w, stat, wrong); }, "rstd");
  expect_invalid([&] { backend.group_norm_backward_with_sums(g, x, x, w, stat, stat, wrong, stat, y); }, "mean_g");
  expect_invalid([&] { backend.group_norm_backward_with_sums(g, x, x, w, stat, stat, stat, wrong, y); },
                 "mean_g_xhat");
}

TEST(TiledGroupNormChecks, MismatchedPointsAndGatheredSumsAreRefused) {
  CpuBackend backend;
  const TileGrid grid{{8, 8}, {4, 4}, {0, 0}, {8, 8}};
  try {
    check_tiled_group_norm({NormGeometry{4, 2, 60, 1e-5f}, grid});
    ADD_FAILURE() << "a norm over 60 points of a 64-point field was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the norm's 60 points are not the field's 64"), std::string::npos)
        << e.what();
  }
  const TiledGroupNorm tiled{NormGeometry{4, 2, 64, 1e-5f}, grid};
  try {
    group_norm_statistics(backend, tiled, 1, std::vector<double>(3 * 4, 0.0));
    ADD_FAILURE() << "3 tiles' sums for 4 tiles were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("hold 12 values, expected 16 (4 tiles of 1 samples x 2 groups x 2)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace sluice::kernels
