// Exactness by construction for the loss of a split field (issue 32, item 3): the loss per canonical tile
// (kernels/tiled_loss.h), the tiles' sums of all blocks added in global tile order, is the same double on the field
// held whole as one block and on every split, and its gradient the same bits; the one-block loss is the backend's
// plain loss of the whole field to within rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/tiled_loss.h"
#include "tests/kernels/random_tensor.h"
#include "tests/kernels/split_field.h"

namespace sluice::kernels {
namespace {

constexpr int64_t kChannels = 3;
const std::vector<int64_t> kGlobal = {16, 12}, kTile = {4, 4};

// A distribution over the channels at every point (cross entropy's target).
Tensor distributions(int64_t samples, int64_t points) {
  Tensor t = random_tensor(samples, kChannels * points, 61);
  for (int64_t n = 0; n < samples; ++n) {
    for (int64_t p = 0; p < points; ++p) {
      double sum = 0.0;
      for (int64_t c = 0; c < kChannels; ++c) {
        t.at(n, c * points + p) += 1.5f;  // in [0.5, 2.5): positive
        sum += t.at(n, c * points + p);
      }
      for (int64_t c = 0; c < kChannels; ++c) t.at(n, c * points + p) /= static_cast<float>(sum);
    }
  }
  return t;
}

struct LossResult {
  double value = 0.0;
  Tensor grad;
};

LossResult split_loss(CpuBackend& backend, FieldLoss loss, const std::vector<Block>& blocks) {
  const int64_t points = kGlobal[0] * kGlobal[1];
  const Tensor pred = random_tensor(2, kChannels * points, 62), target = distributions(2, points);
  LossResult r{0.0, Tensor::host(2, kChannels * points)};
  std::vector<TileLoss> sums;
  const std::vector<int64_t> none = {0, 0};
  for (const Block& block : blocks) {
    const TileGrid grid{kGlobal, kTile, block.offset, block.extent};
    const Tensor p = padded_block(pred, kChannels, kGlobal, block, none, none);
    const Tensor t = padded_block(target, kChannels, kGlobal, block, none, none);
    Tensor grad = Tensor::host(2, p.cols());
    for (const TileLoss& s : tiled_field_loss(backend, loss, grid, kChannels, p, t, 0.5f, grad)) sums.push_back(s);
    place_block(grad, kChannels, kGlobal, block, r.grad);
  }
  r.value = sum_tile_losses(sums, TileGrid{kGlobal, kTile, {}, {}}.global_tiles());
  if (blocks.size() == 1) {  // against the backend's plain loss of the whole field
    Tensor grad = Tensor::host(2, kChannels * points);
    const double plain = loss == FieldLoss::kMse ? backend.mse(pred, target, 0.5f, grad)
                                                 : backend.channel_softmax_cross_entropy(kChannels, pred, target,
                                                                                         0.5f, grad);
    EXPECT_NEAR(r.value, plain, 1e-9 * std::fabs(plain));
    for (int64_t i = 0; i < grad.size(); ++i) EXPECT_NEAR(r.grad.data()[i], grad.data()[i], 1e-6) << "grad " << i;
  }
  return r;
}

void check_loss(FieldLoss loss) {
  CpuBackend backend;
  const LossResult whole = split_loss(backend, loss, {Block{{0, 0}, kGlobal}});
  for (const auto& cuts : std::vector<std::vector<std::vector<int64_t>>>{{{8, 8}, {4, 8}}, {{4, 12}, {8, 4}}}) {
    const LossResult split = split_loss(backend, loss, blocks_of(cuts));
    EXPECT_EQ(std::memcmp(&split.value, &whole.value, sizeof(double)), 0) << split.value << " vs " << whole.value;
    EXPECT_EQ(std::memcmp(split.grad.data(), whole.grad.data(), whole.grad.bytes()), 0) << "gradient";
  }
}

TEST(TiledLossTest, MseSplitsGiveTheOneBlockBits) { check_loss(FieldLoss::kMse); }

TEST(TiledLossTest, ChannelCrossEntropySplitsGiveTheOneBlockBits) { check_loss(FieldLoss::kChannelCrossEntropy); }

// In tile order (1 + 1e16) − 1e16 = 0; in the order given, (1e16 − 1e16) + 1 = 1. A missing or repeated tile is
// refused by name.
TEST(TiledLossTest, SumsAreAddedInTileOrderAndMustCoverTheField) {
  EXPECT_EQ(sum_tile_losses({{1, 1e16}, {2, -1e16}, {0, 1.0}}, 3), 0.0);
  try {
    sum_tile_losses({{0, 1.0}, {2, 1.0}}, 3);
    FAIL() << "a missing tile was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tile 1 has no sum"), std::string::npos) << e.what();
  }
  EXPECT_THROW(sum_tile_losses({{0, 1.0}, {0, 1.0}, {1, 1.0}}, 3), Error);
}

}  // namespace
}  // namespace sluice::kernels
