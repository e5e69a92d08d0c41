// Exactness by construction (issue 32, item 3): a stride-1 'same' conv over a periodically wrapped field, computed
// per canonical tile (kernels/tiled_conv.h), gives the same bits on the field held whole as ONE block as on the
// blocks of any split (even or uneven) put back together: the output, dx (gather form: no overlapping windows are
// added) and the parameter gradients (per-tile partials of all blocks added in global tile order). And the tiled
// result is the backend's plain whole-field conv (periodic padding, then a 'valid' conv) to within rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/tiled_conv.h"
#include "tests/kernels/random_tensor.h"
#include "tests/kernels/split_field.h"

namespace sluice::kernels {
namespace {

struct Case {
  int64_t samples = 2;
  int64_t in_channels = 3;
  int64_t out_channels = 4;
  std::vector<int64_t> global;
  std::vector<int64_t> tile;
  std::vector<int64_t> kernel;
  std::vector<int64_t> dilation;
  int64_t groups = 1;
};

ConvGeometry whole_conv(const Case& c) {
  ConvGeometry g;
  g.in_channels = c.in_channels;
  g.out_channels = c.out_channels;
  g.groups = c.groups;
  g.in = c.global;
  g.kernel = c.kernel;
  g.dilation = c.dilation;
  g.stride.assign(c.global.size(), 1);
  for (size_t d = 0; d < c.global.size(); ++d) {
    g.pad_low.push_back(same_pad_low(c.kernel[d], c.dilation[d]));
    g.pad_high.push_back(same_pad_high(c.kernel[d], c.dilation[d]));
  }
  complete_conv_geometry(g);
  return g;
}

int64_t points(const std::vector<int64_t>& extents) {
  int64_t p = 1;
  for (int64_t e : extents) p *= e;
  return p;
}

struct Inputs {
  Tensor x, dy, weight, bias;
};

Inputs inputs_of(const Case& c) {
  const ConvGeometry g = whole_conv(c);
  return {random_tensor(c.samples, g.in_features(), 11), random_tensor(c.samples, g.out_features(), 12),
          random_tensor(c.out_channels, g.weight_cols(), 13), random_tensor(1, c.out_channels, 14)};
}

// The whole field's results, put together from the blocks of one split.
struct Results {
  Tensor y, dx, weight_grad, bias_grad;
};

// Runs every block of the split through the tiled ops; the partials of all blocks are gathered block by block (not
// in tile order) and added by add_tile_partials.
Results tiled_run(CpuBackend& backend, const Case& c, const std::vector<Block>& blocks) {
  const ConvGeometry g = whole_conv(c);
  const Inputs in = inputs_of(c);
  Results r{Tensor::host(c.samples, g.out_features()), Tensor::host(c.samples, g.in_features()),
            Tensor::host(c.out_channels, g.weight_cols()), Tensor::host(1, c.out_channels)};
  std::vector<TilePartial> partials;
  for (const Block& block : blocks) {
    const TiledConv t{g, TileGrid{c.global, c.tile, block.offset, block.extent}};
    const Tensor x_padded = padded_block(in.x, c.in_channels, c.global, block, g.pad_low, g.pad_high);
    const Tensor dy_padded = padded_block(in.dy, c.out_channels, c.global, block, g.pad_high, g.pad_low);
    const std::vector<int64_t> none(c.global.size(), 0);
    const Tensor dy = padded_block(in.dy, c.out_channels, c.global, block, none, none);
    Tensor y = Tensor::host(c.samples, c.out_channels * points(block.extent));
    Tensor dx = Tensor::host(c.samples, c.in_channels * points(block.extent));
    tiled_conv_forward(backend, t, x_padded, in.weight, &in.bias, y);
    tiled_conv_backward_data(backend, t, dy_padded, in.weight, dx);
    for (TilePartial& p : tiled_conv_param_grad_partials(backend, t, x_padded, dy, true)) {
      partials.push_back(std::move(p));
    }
    place_block(y, c.out_channels, c.global, block, r.y);
    place_block(dx, c.in_channels, c.global, block, r.dx);
  }
  const int64_t tiles = TileGrid{c.global, c.tile, {}, {}}.global_tiles();
  add_tile_partials(backend, partials, tiles, r.weight_grad, &r.bias_grad);
  return r;
}

// The backend's plain conv of the whole field: periodic padding, a 'valid' conv, and the padding's adjoint.
Results plain_run(CpuBackend& backend, const Case& c) {
  const ConvGeometry g = whole_conv(c);
  const Inputs in = inputs_of(c);
  PadGeometry pad{PadMode::kPeriodic, c.in_channels, c.global, g.pad_low, g.pad_high};
  ConvGeometry valid = g;
  valid.in = pad.padded();
  valid.pad_low.assign(c.global.size(), 0);
  valid.pad_high.assign(c.global.size(), 0);
  complete_conv_geometry(valid);
  Tensor padded = Tensor::host(c.samples, pad.out_features());
  backend.pad_forward(pad, in.x, padded);
  Results r{Tensor::host(c.samples, g.out_features()), Tensor::host(c.samples, g.in_features()),
            Tensor::host(c.out_channels, g.weight_cols()), Tensor::host(1, c.out_channels)};
  backend.conv_forward(valid, padded, in.weight, &in.bias, r.y);
  Tensor dpadded = Tensor::host(c.samples, pad.out_features());
  backend.conv_backward_data(valid, in.dy, in.weight, dpadded);
  backend.pad_backward(pad, dpadded, r.dx);
  backend.conv_accumulate_param_grads(valid, padded, in.dy, r.weight_grad, &r.bias_grad);
  return r;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && std::memcmp(a.data(), b.data(), a.bytes()) == 0;
}

void expect_same_bits(const Results& a, const Results& b, const std::string& what) {
  EXPECT_TRUE(same_bits(a.y, b.y)) << what << ": forward output";
  EXPECT_TRUE(same_bits(a.dx, b.dx)) << what << ": dx";
  EXPECT_TRUE(same_bits(a.weight_grad, b.weight_grad)) << what << ": weight gradient";
  EXPECT_TRUE(same_bits(a.bias_grad, b.bias_grad)) << what << ": bias gradient";
}

void expect_near(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (int64_t i = 0; i < a.size(); ++i) {
    const float tolerance = 1e-5f * std::max(1.0f, std::fabs(b.data()[i]));
    ASSERT_NEAR(a.data()[i], b.data()[i], tolerance) << what << " element " << i;
  }
}

// Every split gives the one-block bits; the one-block run is the plain conv to within rounding.
void check_case(const Case& c, const std::vector<std::vector<std::vector<int64_t>>>& splits) {
  CpuBackend backend;
  const Results whole = tiled_run(backend, c, {Block{std::vector<int64_t>(c.global.size(), 0), c.global}});
  const Results plain = plain_run(backend, c);
  expect_near(whole.y, plain.y, "forward output");
  expect_near(whole.dx, plain.dx, "dx");
  expect_near(whole.weight_grad, plain.weight_grad, "weight gradient");
  expect_near(whole.bias_grad, plain.bias_grad, "bias gradient");
  for (size_t s = 0; s < splits.size(); ++s) {
    expect_same_bits(tiled_run(backend, c, blocks_of(splits[s])), whole, "split " + std::to_string(s));
  }
}

// 16x12, tile 4x4: 2x2 blocks, even and uneven (8+8 by 4+8, 4+12 by 8+4).
const std::vector<std::vector<std::vector<int64_t>>> kSplits2d = {{{8, 8}, {4, 8}}, {{4, 12}, {8, 4}}};

TEST(TiledConvTest, Kernel3x3SplitsGiveTheOneBlockBits) {
  check_case({2, 3, 4, {16, 12}, {4, 4}, {3, 3}, {1, 1}}, kSplits2d);
}

TEST(TiledConvTest, Kernel5x5Dilation2SplitsGiveTheOneBlockBits) {
  check_case({2, 3, 4, {16, 12}, {4, 4}, {5, 5}, {2, 2}}, kSplits2d);
}

// An even kernel pads one more on the high side: the backward's dy halo is the forward's mirrored.
TEST(TiledConvTest, AsymmetricHaloSplitsGiveTheOneBlockBits) {
  check_case({2, 3, 4, {16, 12}, {4, 4}, {4, 2}, {1, 3}}, kSplits2d);
}

// Grouped: 4 -> 6 channels in 2 groups.
TEST(TiledConvTest, GroupedConvSplitsGiveTheOneBlockBits) {
  check_case({2, 4, 6, {16, 12}, {4, 4}, {3, 3}, {1, 1}, 2}, kSplits2d);
}

// 16x4x8, tile 4x4x4: 2x1x2 blocks, 8+8 or 4+12 by 4 by 4+4 (each block's tiles are not a run of the global order).
TEST(TiledConvTest, ThreeDimensionalSplitsGiveTheOneBlockBits) {
  const std::vector<std::vector<std::vector<int64_t>>> splits = {{{8, 8}, {4}, {4, 4}}, {{4, 12}, {4}, {4, 4}}};
  check_case({2, 3, 4, {16, 4, 8}, {4, 4, 4}, {3, 3, 3}, {1, 1, 1}}, splits);
  check_case({1, 2, 3, {16, 4, 8}, {4, 4, 4}, {3, 5, 3}, {1, 2, 1}}, splits);
}

// The sum of the partials is in global tile order whatever order they come in; a missing or repeated tile is
// refused by name.
TEST(TiledConvTest, PartialsAreAddedInTileOrderAndMustCoverTheField) {
  CpuBackend backend;
  std::vector<TilePartial> partials;
  for (int64_t t = 0; t < 6; ++t) partials.push_back({t, random_tensor(2, 3, 20 + t), random_tensor(1, 2, 30 + t)});
  Tensor ordered_w = Tensor::host(2, 3), ordered_b = Tensor::host(1, 2);
  for (const TilePartial& p : partials) {
    backend.axpy(1.0f, p.weight_grad, ordered_w);
    backend.axpy(1.0f, p.bias_grad, ordered_b);
  }
  std::vector<TilePartial> shuffled = {partials[4], partials[1], partials[5], partials[0], partials[3], partials[2]};
  Tensor w = Tensor::host(2, 3), b = Tensor::host(1, 2);
  add_tile_partials(backend, shuffled, 6, w, &b);
  EXPECT_TRUE(same_bits(w, ordered_w));
  EXPECT_TRUE(same_bits(b, ordered_b));
  shuffled.pop_back();
  try {
    add_tile_partials(backend, shuffled, 6, w, &b);
    FAIL() << "a missing tile was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tile 2 has no partial"), std::string::npos) << e.what();
  }
  shuffled.push_back(partials[1]);
  EXPECT_THROW(add_tile_partials(backend, shuffled, 6, w, &b), Error);
}

// A 1-D field: 24 points, tile 4, blocks 8 + 16 and 12 + 4 + 8.
TEST(TiledConvTest, OneDimensionalSplitsGiveTheOneBlockBits) {
  check_case({2, 3, 4, {24}, {4}, {5}, {1}}, {{{8, 16}}, {{12, 4, 8}}});
}

// Order rule 3: per-tile accumulators over micro-batches, each tile's in micro-batch order whatever the order of the
// tiles within a micro-batch; a tile twice in one micro-batch is refused.
TEST(TiledConvTest, TileAccumulatorsAddMicroBatchesPerTile) {
  CpuBackend backend;
  auto batch = [](unsigned seed, const std::vector<int64_t>& tiles) {
    std::vector<TilePartial> partials;
    for (int64_t t : tiles) partials.push_back({t, random_tensor(2, 3, seed + t), random_tensor(1, 2, seed + 9 + t)});
    return partials;
  };
  const std::vector<TilePartial> first = batch(100, {0, 1, 2}), second = batch(200, {2, 0, 1});
  std::vector<TilePartial> accumulators;
  accumulate_tile_partials(backend, first, accumulators);
  accumulate_tile_partials(backend, second, accumulators);
  ASSERT_EQ(accumulators.size(), 3u);
  for (const TilePartial& a : accumulators) {
    Tensor w = first[a.tile].weight_grad, b = first[a.tile].bias_grad;
    const TilePartial& s = second[a.tile == 2 ? 0 : a.tile + 1];
    ASSERT_EQ(s.tile, a.tile);
    backend.axpy(1.0f, s.weight_grad, w);
    backend.axpy(1.0f, s.bias_grad, b);
    EXPECT_TRUE(same_bits(a.weight_grad, w)) << "tile " << a.tile;
    EXPECT_TRUE(same_bits(a.bias_grad, b)) << "tile " << a.tile;
  }
  EXPECT_THROW(accumulate_tile_partials(backend, batch(300, {1, 1}), accumulators), Error);
}

// The CPU backend, counting the column copies (kernels/field_box.h) that cut tile windows out of a block.
class CopyCountingBackend : public CpuBackend {
 public:
  int64_t copies = 0;

 protected:
  void copy_columns_impl(const Tensor& source, int64_t source_col, Tensor& destination, int64_t destination_col,
                         int64_t count, bool add) override {
    ++copies;
    CpuBackend::copy_columns_impl(source, source_col, destination, destination_col, count, add);
  }
};

// A block of one tile (the domain bench's blocks: pipeline.domain_tile = one block) runs the three passes on its
// padded tensors in place: no window or result copies (they would be as large as the block's padded input and
// output), and the one-block bits (a 4x4 split of 16x12 into 4x4 tiles, each block one tile).
TEST(TiledConvTest, AOneTileBlockRunsInPlaceWithTheOneBlockBits) {
  const Case c{2, 3, 4, {16, 12}, {4, 4}, {3, 3}, {1, 1}};
  CpuBackend plain;
  const Results whole = tiled_run(plain, c, {Block{{0, 0}, c.global}});
  CopyCountingBackend counting;
  expect_same_bits(tiled_run(counting, c, blocks_of({{4, 4, 4, 4}, {4, 4, 4}})), whole, "one-tile blocks");
  EXPECT_EQ(counting.copies, 0) << "a one-tile block copied windows or results";
  // A block of two tiles still cuts its windows out (the count proves the counter sees the copies).
  counting.copies = 0;
  tiled_run(counting, c, blocks_of({{8, 8}, {4, 4, 4}}));
  EXPECT_GT(counting.copies, 0);
}

TEST(TiledConvTest, ABlockThatIsNotAUnionOfTilesIsRefusedByName) {
  CpuBackend backend;
  const Case c{1, 1, 1, {16, 12}, {4, 4}, {3, 3}, {1, 1}};
  const TiledConv t{whole_conv(c), TileGrid{c.global, c.tile, {0, 2}, {8, 6}}};
  Tensor x = Tensor::host(1, 10 * 8), w = Tensor::host(1, 9), y = Tensor::host(1, 8 * 6);
  try {
    tiled_conv_forward(backend, t, x, w, nullptr, y);
    FAIL() << "a block off the tile grid was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("in dimension 1 is not a union of whole tiles of 4"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace sluice::kernels
