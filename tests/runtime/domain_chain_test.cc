// The domain-parallel ops composed (issue 32 items 2 and 3), on 4 MPI ranks against the whole field as one block:
// a conv (3 x 3) -> GELU -> conv (even 4 x 2 kernel) -> MSE chain, forward and backward over 2 micro-batches, gives
// every micro-batch's loss, the input's dx and all parameter gradients bit for bit; and the sampling ops on the
// blocks of the 2-D split and of its coarser level (pool, nearest and linear upsampling, the stride = kernel
// transposed conv with its parameter gradients).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/runtime/domain_conv.h"
#include "core/runtime/domain_deconv.h"
#include "core/runtime/domain_loss.h"
#include "core/runtime/domain_sampling.h"
#include "kernels/activation.h"
#include "kernels/conv_geometry.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/kernels/random_tensor.h"
#include "tests/runtime/domain_runs.h"

namespace sluice::runtime {
namespace {

using kernels::random_tensor;
using kernels::Tensor;

const Split kUneven2d{{16, 16}, {4, 4}, {{8, 8}, {4, 12}}};
constexpr int64_t kSamples = 2, kIn = 2, kHidden = 3, kOut = 2;

kernels::ConvGeometry same_conv(int64_t in, int64_t out, const std::vector<int64_t>& kernel) {
  kernels::ConvGeometry g;
  g.in_channels = in;
  g.out_channels = out;
  g.in = kUneven2d.global;
  g.kernel = kernel;
  g.dilation = {1, 1};
  g.stride = {1, 1};
  for (const int64_t k : kernel) {
    g.pad_low.push_back(kernels::same_pad_low(k, 1));
    g.pad_high.push_back(kernels::same_pad_high(k, 1));
  }
  kernels::complete_conv_geometry(g);
  return g;
}

struct ChainResults {
  std::vector<double> losses;
  std::vector<Tensor> dx;  // per micro-batch, the block's
  Tensor w1, b1, w2, b2;   // the step's parameter gradients
};

// One step of conv -> GELU -> conv -> MSE on `field`'s block; `cut` gives the block of a whole-field tensor.
ChainResults run_chain(kernels::Backend& backend, const DomainField& field,
                       const std::function<Tensor(const Tensor&, int64_t)>& cut) {
  const kernels::ConvGeometry g1 = same_conv(kIn, kHidden, {3, 3}), g2 = same_conv(kHidden, kOut, {4, 2});
  DomainConv conv1(backend, field, g1, true, "conv1"), conv2(backend, field, g2, true, "conv2");
  const Tensor w1 = random_tensor(kHidden, g1.weight_cols(), 1), b1 = random_tensor(1, kHidden, 2);
  const Tensor w2 = random_tensor(kOut, g2.weight_cols(), 3), b2 = random_tensor(1, kOut, 4);
  const int64_t points = points_of(kUneven2d.global), block = field.grid().block_points();
  ChainResults r{{}, {}, Tensor::host(w1.rows(), w1.cols()), Tensor::host(1, kHidden),
                 Tensor::host(w2.rows(), w2.cols()), Tensor::host(1, kOut)};
  for (unsigned m = 0; m < 2; ++m) {
    const Tensor x = cut(random_tensor(kSamples, kIn * points, 10 + m), kIn);
    const Tensor target = cut(random_tensor(kSamples, kOut * points, 20 + m), kOut);
    const Tensor x1 = conv1.pad_input(x);
    const Tensor pre = conv1.forward(x1, w1, &b1);
    Tensor hidden = Tensor::host(pre.rows(), pre.cols());
    backend.activation_forward(kernels::Activation::kGelu, pre, hidden);
    const Tensor x2 = conv2.pad_input(hidden);
    const Tensor y = conv2.forward(x2, w2, &b2);
    Tensor dy = Tensor::host(kSamples, kOut * block);
    r.losses.push_back(domain_field_loss(backend, field, kernels::FieldLoss::kMse, kOut, y, target,
                                         1.0f / static_cast<float>(points), dy, "chain loss"));
    conv2.accumulate_param_grads(x2, dy);
    const Tensor d_hidden = conv2.backward_data(dy, w2);
    Tensor d_pre = Tensor::host(pre.rows(), pre.cols());
    backend.activation_backward(kernels::Activation::kGelu, pre, d_hidden, d_pre);
    conv1.accumulate_param_grads(x1, d_pre);
    r.dx.push_back(conv1.backward_data(d_pre, w1));
  }
  conv1.finish_step(r.w1, &r.b1);
  conv2.finish_step(r.w2, &r.b2);
  return r;
}

TEST(DomainChainTest, ConvGeluConvStepGivesTheWholeFieldBits) {
  kernels::CpuBackend backend;
  Runs runs(kUneven2d);
  const ChainResults whole =
      run_chain(backend, runs.whole->field(), [](const Tensor& t, int64_t) { return t; });
  const ChainResults split =
      run_chain(backend, runs.domain.field(), [&](const Tensor& t, int64_t c) { return runs.cut(t, c); });
  for (size_t m = 0; m < 2; ++m) {
    EXPECT_EQ(std::memcmp(&split.losses[m], &whole.losses[m], sizeof(double)), 0)
        << "micro-batch " << m << ": " << split.losses[m] << " vs " << whole.losses[m];
    expect_bits(split.dx[m], runs.cut(whole.dx[m], kIn), "input dx, micro-batch " + std::to_string(m));
  }
  expect_bits(split.w1, whole.w1, "conv1 weight gradient");
  expect_bits(split.b1, whole.b1, "conv1 bias gradient");
  expect_bits(split.w2, whole.w2, "conv2 weight gradient");
  expect_bits(split.b2, whole.b2, "conv2 bias gradient");
}

// Pool (max and mean) and nearest upsampling: the plain op on the block, no message.
TEST(DomainSamplingTest, PoolAndNearestUpsampleOnBlocksGiveTheWholeFieldBits) {
  kernels::CpuBackend backend;
  Runs runs(kUneven2d);
  const DomainField coarse = runs.domain.field().coarsened({2, 2});
  const DomainField whole_coarse = runs.whole->field().coarsened({2, 2});
  const int64_t points = points_of(kUneven2d.global);
  const Tensor x = random_tensor(kSamples, kIn * points, 40), dy = random_tensor(kSamples, kIn * points / 4, 41);
  const Tensor x_block = runs.cut(x, kIn), dy_block = cut_block(dy, kIn, coarse.grid());
  for (const kernels::PoolMode mode : {kernels::PoolMode::kMax, kernels::PoolMode::kAvg}) {
    const kernels::PoolGeometry g = block_pool_geometry(runs.domain.field(), mode, kIn, {2, 2});
    const kernels::PoolGeometry gw = block_pool_geometry(runs.whole->field(), mode, kIn, {2, 2});
    Tensor y = Tensor::host(kSamples, g.out_features()), yw = Tensor::host(kSamples, gw.out_features());
    Tensor dx = Tensor::host(kSamples, g.in_features()), dxw = Tensor::host(kSamples, gw.in_features());
    backend.pool_forward(g, x_block, y);
    backend.pool_backward(g, x_block, dy_block, dx);
    backend.pool_forward(gw, x, yw);
    backend.pool_backward(gw, x, dy, dxw);
    expect_bits(y, cut_block(yw, kIn, coarse.grid()), "pool output");
    expect_bits(dx, runs.cut(dxw, kIn), "pool dx");
  }
  const kernels::ResampleGeometry g = block_nearest_geometry(coarse, kIn, {2, 2});
  const kernels::ResampleGeometry gw = block_nearest_geometry(whole_coarse, kIn, {2, 2});
  Tensor y = Tensor::host(kSamples, g.out_features()), yw = Tensor::host(kSamples, gw.out_features());
  Tensor dx = Tensor::host(kSamples, g.in_features()), dxw = Tensor::host(kSamples, gw.in_features());
  backend.resample_forward(g, dy_block, y);
  backend.resample_backward(g, x_block, dx);
  backend.resample_forward(gw, dy, yw);
  backend.resample_backward(gw, x, dxw);
  expect_bits(y, runs.cut(yw, kIn), "nearest upsample output");
  expect_bits(dx, cut_block(dxw, kIn, coarse.grid()), "nearest upsample dx");
  EXPECT_EQ(runs.domain.channel().totals().bytes_sent, 0);
}

// Linear upsampling by 3 x 2 (a factor that is not a power of two) from the coarse level, with its halos.
TEST(DomainSamplingTest, LinearUpsampleOnBlocksGivesTheWholeFieldBits) {
  kernels::CpuBackend backend;
  Runs runs(kUneven2d);
  const DomainField coarse = runs.domain.field().coarsened({2, 2});
  const DomainField whole_coarse = runs.whole->field().coarsened({2, 2});
  const std::vector<int64_t> factor = {3, 2};
  const DomainLinearUpsample up(backend, coarse, kIn, factor), whole_up(backend, whole_coarse, kIn, factor);
  const kernels::TileGrid fine = coarse.refined(factor).grid();
  const int64_t in_points = points_of(whole_coarse.grid().global), out_points = points_of(fine.global);
  const Tensor x = random_tensor(kSamples, kIn * in_points, 50), dy = random_tensor(kSamples, kIn * out_points, 51);
  expect_bits(up.forward(cut_block(x, kIn, coarse.grid())), cut_block(whole_up.forward(x), kIn, fine),
              "linear upsample output");
  expect_bits(up.backward_data(cut_block(dy, kIn, fine)), cut_block(whole_up.backward_data(dy), kIn, coarse.grid()),
              "linear upsample dx");
}

// The U-Net's up-convolution (kernel = stride = 2) from the coarse level: no halo; its gradients over 2
// micro-batches gathered in tile order.
TEST(DomainSamplingTest, ConvTransposeOnBlocksGivesTheWholeFieldBits) {
  kernels::CpuBackend backend;
  Runs runs(kUneven2d);
  const DomainField coarse = runs.domain.field().coarsened({2, 2});
  const DomainField whole_coarse = runs.whole->field().coarsened({2, 2});
  kernels::DeconvGeometry g;
  g.in_channels = kHidden;
  g.out_channels = kOut;
  g.in = whole_coarse.grid().global;
  g.kernel = g.stride = {2, 2};
  DomainDeconv split(backend, coarse, g, true, "up"), whole(backend, whole_coarse, g, true, "up");
  const Tensor w = random_tensor(g.in_channels, g.weight_cols(), 60), b = random_tensor(1, g.out_channels, 61);
  const kernels::TileGrid& fine = runs.domain.field().grid();
  for (unsigned m = 0; m < 2; ++m) {
    const Tensor x = random_tensor(kSamples, g.in_features(), 62 + m);
    const Tensor dy = random_tensor(kSamples, g.out_features(), 64 + m);
    const Tensor x_block = cut_block(x, kHidden, coarse.grid()), dy_block = cut_block(dy, kOut, fine);
    expect_bits(split.forward(x_block, w, &b), cut_block(whole.forward(x, w, &b), kOut, fine), "up output");
    expect_bits(split.backward_data(dy_block, w), cut_block(whole.backward_data(dy, w), kHidden, coarse.grid()),
                "up dx");
    split.accumulate_param_grads(x_block, dy_block);
    whole.accumulate_param_grads(x, dy);
  }
  Tensor sw = Tensor::host(w.rows(), w.cols()), sb = Tensor::host(1, kOut);
  Tensor ww = Tensor::host(w.rows(), w.cols()), wb = Tensor::host(1, kOut);
  split.finish_step(sw, &sb);
  whole.finish_step(ww, &wb);
  expect_bits(sw, ww, "up weight gradient");
  expect_bits(sb, wb, "up bias gradient");
}

}  // namespace
}  // namespace sluice::runtime
