// Per-tile normalization statistics (core/runtime/normalization_tiles.h) without MPI: the partials a 2 x 2 split's
// blocks write are the whole field's partials bit for bit (each tile summed in its own point order, whichever block
// holds it), so the totals are the same; and the statistics are the whole-sample ones (statistics_of) within
// rounding.
#include "core/runtime/normalization_tiles.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace sluice::runtime {
namespace {

constexpr int64_t kRows = 3, kChannels = 2, kSide = 8;

float value(int64_t r, int64_t c, int64_t y, int64_t x) {
  return static_cast<float>(5.0 * c + 0.3 * y + std::sin(1.7 * static_cast<double>(x * (c + 1)) + 0.9 * r));
}

std::vector<float> block_values(const kernels::TileGrid& g) {
  std::vector<float> out;
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t c = 0; c < kChannels; ++c) {
      for (int64_t y = g.block_offset[0]; y < g.block_offset[0] + g.block_extent[0]; ++y) {
        for (int64_t x = g.block_offset[1]; x < g.block_offset[1] + g.block_extent[1]; ++x) {
          out.push_back(value(r, c, y, x));
        }
      }
    }
  }
  return out;
}

// Partials [rows][tiles][channels] from the blocks of `cuts` (offsets and extents per block), about `mean` if given.
std::vector<double> partials(const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>& cuts,
                             const double* mean) {
  std::vector<double> out(static_cast<size_t>(kRows * 16 * kChannels), 0.0);
  for (const auto& [offset, extent] : cuts) {
    const kernels::TileGrid g{{kSide, kSide}, {2, 2}, offset, extent};
    kernels::check_tile_grid(g);
    const std::vector<float> block = block_values(g);
    add_tile_partials(block.data(), kRows, kChannels, g, mean, out.data());
  }
  return out;
}

TEST(NormalizationTilesTest, ASplitWritesTheWholeFieldsPartials) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> whole = {{{0, 0}, {8, 8}}};
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> split = {
      {{0, 0}, {2, 6}}, {{0, 6}, {2, 2}}, {{2, 0}, {6, 6}}, {{2, 6}, {6, 2}}};  // uneven: whole tiles of 2
  const std::vector<double> sums = partials(whole, nullptr);
  const std::vector<double> split_sums = partials(split, nullptr);
  ASSERT_EQ(sums.size(), split_sums.size());
  EXPECT_EQ(std::memcmp(sums.data(), split_sums.data(), sums.size() * sizeof(double)), 0);
  const double count = static_cast<double>(kRows * kSide * kSide);
  const std::vector<double> totals = channel_totals(sums, kRows, 16, kChannels);
  std::vector<double> mean(totals.size());
  for (size_t c = 0; c < totals.size(); ++c) mean[c] = totals[c] / count;
  const std::vector<double> squares = partials(whole, mean.data());
  const std::vector<double> split_squares = partials(split, mean.data());
  EXPECT_EQ(std::memcmp(squares.data(), split_squares.data(), squares.size() * sizeof(double)), 0);

  const FeatureScaling tiled =
      tiled_scaling(totals, channel_totals(squares, kRows, 16, kChannels), count, kSide * kSide);
  const std::vector<float> all = block_values({{kSide, kSide}, {2, 2}, {0, 0}, {kSide, kSide}});
  const FeatureScaling plain = statistics_of(all.data(), kRows, kChannels * kSide * kSide, kSide * kSide);
  ASSERT_EQ(tiled.mean.size(), static_cast<size_t>(kChannels));
  EXPECT_EQ(tiled.points, kSide * kSide);
  for (int64_t c = 0; c < kChannels; ++c) {
    EXPECT_NEAR(tiled.mean[c], plain.mean[c], 1e-6 * std::abs(plain.mean[c])) << c;
    EXPECT_NEAR(tiled.std[c], plain.std[c], 1e-6 * plain.std[c]) << c;
    EXPECT_GT(tiled.std[c], 0.1f) << c;
  }
}

}  // namespace
}  // namespace sluice::runtime
