// Exactness by construction for the sampling layers (issue 32, item 3). The transposed convolution with
// stride = kernel and linear upsampling, per tile (kernels/tiled_deconv.h, kernels/tiled_upsample.h): every split
// gives the one-block bits (output, dx, parameter gradients added in tile order) and the plain whole-field op's
// values to within rounding. Pooling (stride =
// kernel) and nearest upsampling are NOT tiled: each output is its own window's max, mean or copy, computed alone,
// so the backend's plain call on each block already gives the whole field's bits; checked here on CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/tiled_deconv.h"
#include "kernels/tiled_upsample.h"
#include "tests/kernels/random_tensor.h"
#include "tests/kernels/split_field.h"

namespace sluice::kernels {
namespace {

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && std::memcmp(a.data(), b.data(), a.bytes()) == 0;
}

void expect_near(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (int64_t i = 0; i < a.size(); ++i) {
    const float tolerance = 1e-5f * std::max(1.0f, std::fabs(b.data()[i]));
    ASSERT_NEAR(a.data()[i], b.data()[i], tolerance) << what << " element " << i;
  }
}

std::vector<int64_t> scaled(std::vector<int64_t> values, const std::vector<int64_t>& factor, bool up) {
  for (size_t d = 0; d < values.size(); ++d) values[d] = up ? values[d] * factor[d] : values[d] / factor[d];
  return values;
}

Block scaled(const Block& b, const std::vector<int64_t>& factor, bool up) {
  return {scaled(b.offset, factor, up), scaled(b.extent, factor, up)};
}

const std::vector<int64_t>& none(size_t dims) {
  static const std::vector<std::vector<int64_t>> zeros = {{}, {0}, {0, 0}, {0, 0, 0}};
  return zeros[dims];
}

Tensor block_of(const Tensor& field, int64_t channels, const std::vector<int64_t>& global, const Block& block) {
  return padded_block(field, channels, global, block, none(global.size()), none(global.size()));
}

struct DeconvResults {
  Tensor y, dx, weight_grad, bias_grad;
};

DeconvResults deconv_run(CpuBackend& backend, const DeconvGeometry& g, const std::vector<int64_t>& tile,
                         const std::vector<Block>& blocks) {
  const Tensor x = random_tensor(2, g.in_features(), 41), dy = random_tensor(2, g.out_features(), 42);
  const Tensor w = random_tensor(g.in_channels, g.weight_cols(), 43), b = random_tensor(1, g.out_channels, 44);
  DeconvResults r{Tensor::host(2, g.out_features()), Tensor::host(2, g.in_features()),
                  Tensor::host(g.in_channels, g.weight_cols()), Tensor::host(1, g.out_channels)};
  std::vector<TilePartial> partials;
  for (const Block& block : blocks) {
    const TiledDeconv t{g, TileGrid{g.in, tile, block.offset, block.extent}};
    const Block out_block = scaled(block, g.kernel, true);
    const Tensor x_block = block_of(x, g.in_channels, g.in, block);
    const Tensor dy_block = block_of(dy, g.out_channels, g.out(), out_block);
    Tensor y = Tensor::host(2, g.out_channels * extent_product(out_block.extent));
    Tensor dx = Tensor::host(2, g.in_channels * extent_product(block.extent));
    tiled_deconv_forward(backend, t, x_block, w, &b, y);
    tiled_deconv_backward_data(backend, t, dy_block, w, dx);
    for (TilePartial& p : tiled_deconv_param_grad_partials(backend, t, x_block, dy_block, true)) {
      partials.push_back(std::move(p));
    }
    place_block(y, g.out_channels, g.out(), out_block, r.y);
    place_block(dx, g.in_channels, g.in, block, r.dx);
  }
  add_tile_partials(backend, partials, TileGrid{g.in, tile, {}, {}}.global_tiles(), r.weight_grad, &r.bias_grad);
  if (blocks.size() == 1) {  // the one-block run against the backend's plain whole-field op
    DeconvResults plain{Tensor::host(2, g.out_features()), Tensor::host(2, g.in_features()),
                        Tensor::host(g.in_channels, g.weight_cols()), Tensor::host(1, g.out_channels)};
    backend.deconv_forward(g, x, w, &b, plain.y);
    backend.deconv_backward_data(g, dy, w, plain.dx);
    backend.deconv_accumulate_param_grads(g, x, dy, plain.weight_grad, &plain.bias_grad);
    expect_near(r.y, plain.y, "forward output");
    expect_near(r.dx, plain.dx, "dx");
    expect_near(r.weight_grad, plain.weight_grad, "weight gradient");
    expect_near(r.bias_grad, plain.bias_grad, "bias gradient");
  }
  return r;
}

void check_deconv(const DeconvGeometry& g, const std::vector<int64_t>& tile,
                  const std::vector<std::vector<std::vector<int64_t>>>& splits) {
  CpuBackend backend;
  const DeconvResults whole = deconv_run(backend, g, tile, {Block{none(g.in.size()), g.in}});
  for (size_t s = 0; s < splits.size(); ++s) {
    const DeconvResults split = deconv_run(backend, g, tile, blocks_of(splits[s]));
    const std::string what = "split " + std::to_string(s);
    EXPECT_TRUE(same_bits(split.y, whole.y)) << what << ": forward output";
    EXPECT_TRUE(same_bits(split.dx, whole.dx)) << what << ": dx";
    EXPECT_TRUE(same_bits(split.weight_grad, whole.weight_grad)) << what << ": weight gradient";
    EXPECT_TRUE(same_bits(split.bias_grad, whole.bias_grad)) << what << ": bias gradient";
  }
}

TEST(TiledSamplingTest, ConvTransposeSplitsGiveTheOneBlockBits) {
  check_deconv({4, 3, {8, 6}, {2, 2}, {2, 2}}, {2, 2}, {{{4, 4}, {2, 4}}, {{2, 6}, {4, 2}}});
  // 3-D: each block's tiles are not a run of the global order, so the partials' order matters.
  check_deconv({3, 2, {8, 2, 4}, {2, 2, 2}, {2, 2, 2}}, {2, 2, 2}, {{{4, 4}, {2}, {2, 2}}, {{2, 6}, {2}, {2, 2}}});
}

TEST(TiledSamplingTest, ConvTransposeWithOverlappingBoxesIsRefused) {
  CpuBackend backend;
  const TiledDeconv t{{1, 1, {8}, {3}, {2}}, TileGrid{{8}, {2}, {0}, {8}}};
  Tensor x = Tensor::host(1, 8), w = Tensor::host(1, 3), y = Tensor::host(1, 17);
  EXPECT_THROW(tiled_deconv_forward(backend, t, x, w, nullptr, y), Error);
}

struct UpsampleResults {
  Tensor y, dx;
};

// Linear upsampling per tile on every block of the split, put together; the one-block run against the plain op.
UpsampleResults upsample_run(CpuBackend& backend, const ResampleGeometry& g, const std::vector<int64_t>& tile,
                             const std::vector<Block>& blocks) {
  const Tensor x = random_tensor(2, g.in_features(), 71), dy = random_tensor(2, g.out_features(), 72);
  UpsampleResults r{Tensor::host(2, g.out_features()), Tensor::host(2, g.in_features())};
  const std::vector<int64_t> one(g.in.size(), 1);
  for (const Block& block : blocks) {
    const TiledUpsample t{g, TileGrid{g.in, tile, block.offset, block.extent}};
    const Block out_block = scaled(block, g.factor, true);
    const Tensor x_padded = padded_block(x, g.channels, g.in, block, one, one);
    const Tensor dy_padded = padded_block(dy, g.channels, g.out(), out_block, g.factor, g.factor);
    Tensor y = Tensor::host(2, g.channels * extent_product(out_block.extent));
    Tensor dx = Tensor::host(2, g.channels * extent_product(block.extent));
    tiled_upsample_forward(backend, t, x_padded, y);
    tiled_upsample_backward_data(backend, t, dy_padded, dx);
    place_block(y, g.channels, g.out(), out_block, r.y);
    place_block(dx, g.channels, g.in, block, r.dx);
  }
  if (blocks.size() == 1) {
    UpsampleResults plain{Tensor::host(2, g.out_features()), Tensor::host(2, g.in_features())};
    backend.resample_forward(g, x, plain.y);
    backend.resample_backward(g, dy, plain.dx);
    expect_near(r.y, plain.y, "forward output");
    expect_near(r.dx, plain.dx, "dx");
  }
  return r;
}

void check_upsample(const ResampleGeometry& g, const std::vector<int64_t>& tile,
                    const std::vector<std::vector<std::vector<int64_t>>>& splits) {
  CpuBackend backend;
  const UpsampleResults whole = upsample_run(backend, g, tile, {Block{none(g.in.size()), g.in}});
  for (size_t s = 0; s < splits.size(); ++s) {
    const UpsampleResults split = upsample_run(backend, g, tile, blocks_of(splits[s]));
    EXPECT_TRUE(same_bits(split.y, whole.y)) << "split " << s << ": forward output";
    EXPECT_TRUE(same_bits(split.dx, whole.dx)) << "split " << s << ": dx";
  }
}

// Linear upsampling by factors that are not powers of two: the plain op on a block would differ in the last bits.
TEST(TiledSamplingTest, LinearUpsampleSplitsGiveTheOneBlockBits) {
  check_upsample({ResampleMode::kLinear, 3, {16, 12}, {3, 2}}, {4, 4}, {{{8, 8}, {4, 8}}, {{4, 12}, {8, 4}}});
  check_upsample({ResampleMode::kLinear, 2, {8, 4, 12}, {2, 3, 5}}, {4, 4, 4}, {{{4, 4}, {4}, {4, 8}}});
}

// A plain op of one block: (x_block, dy_block) -> (y_block, dx_block), input extents `in`.
using BlockOp = std::function<void(CpuBackend&, const std::vector<int64_t>& in, const Tensor& x, const Tensor& dy,
                                   Tensor& y, Tensor& dx)>;

// The op on each block of the split (outputs at `factor` of the input, up or down), put together, against the op on
// the whole field: bit for bit.
void expect_blockwise_bits(const BlockOp& op, int64_t channels, const std::vector<int64_t>& global,
                           const std::vector<int64_t>& factor, bool up, const std::vector<Block>& blocks) {
  CpuBackend backend;
  const std::vector<int64_t> out = scaled(global, factor, up);
  const Tensor x = random_tensor(2, channels * extent_product(global), 51);
  const Tensor dy = random_tensor(2, channels * extent_product(out), 52);
  Tensor whole_y = Tensor::host(2, dy.cols()), whole_dx = Tensor::host(2, x.cols());
  op(backend, global, x, dy, whole_y, whole_dx);
  Tensor y = Tensor::host(2, dy.cols()), dx = Tensor::host(2, x.cols());
  for (const Block& block : blocks) {
    const Block out_block = scaled(block, factor, up);
    Tensor block_y = Tensor::host(2, channels * extent_product(out_block.extent));
    Tensor block_dx = Tensor::host(2, channels * extent_product(block.extent));
    op(backend, block.extent, block_of(x, channels, global, block), block_of(dy, channels, out, out_block), block_y,
       block_dx);
    place_block(block_y, channels, out, out_block, y);
    place_block(block_dx, channels, global, block, dx);
  }
  EXPECT_TRUE(same_bits(y, whole_y)) << "forward";
  EXPECT_TRUE(same_bits(dx, whole_dx)) << "backward";
}

BlockOp pool_op(PoolMode mode, const std::vector<int64_t>& kernel) {
  return [mode, kernel](CpuBackend& backend, const std::vector<int64_t>& in, const Tensor& x, const Tensor& dy,
                        Tensor& y, Tensor& dx) {
    const PoolGeometry g{mode, 3, in, kernel};
    backend.pool_forward(g, x, y);
    backend.pool_backward(g, x, dy, dx);
  };
}

BlockOp nearest_op(const std::vector<int64_t>& factor) {
  return [factor](CpuBackend& backend, const std::vector<int64_t>& in, const Tensor& x, const Tensor& dy, Tensor& y,
                  Tensor& dx) {
    const ResampleGeometry g{ResampleMode::kNearest, 3, in, factor};
    backend.resample_forward(g, x, y);
    backend.resample_backward(g, dy, dx);
  };
}

TEST(TiledSamplingTest, PoolAndNearestUpsampleGiveTheWholeFieldBitsOnEveryBlock) {
  const std::vector<Block> blocks2d = blocks_of({{8, 8}, {4, 8}}), blocks3d = blocks_of({{4, 4}, {4}, {4, 8}});
  for (PoolMode mode : {PoolMode::kMax, PoolMode::kAvg}) {
    expect_blockwise_bits(pool_op(mode, {2, 2}), 3, {16, 12}, {2, 2}, false, blocks2d);
    expect_blockwise_bits(pool_op(mode, {2, 2, 2}), 3, {8, 4, 12}, {2, 2, 2}, false, blocks3d);
  }
  expect_blockwise_bits(nearest_op({2, 3}), 3, {16, 12}, {2, 3}, true, blocks2d);
  expect_blockwise_bits(nearest_op({2, 2, 2}), 3, {8, 4, 12}, {2, 2, 2}, true, blocks3d);
}

}  // namespace
}  // namespace sluice::kernels
