// Partitioning: the balanced split is optimal (checked against brute force over all splits), explicit splits
// are validated, and errors name the numbers involved.
#include "core/model/partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/common/error.h"

namespace sluice::model {
namespace {

double max_chunk_cost(const std::vector<double>& costs, const std::vector<int>& split) {
  double worst = 0.0;
  size_t next = 0;
  for (int count : split) {
    double chunk = 0.0;
    for (int i = 0; i < count; ++i) chunk += costs[next++];
    worst = std::max(worst, chunk);
  }
  return worst;
}

// Smallest maximum chunk cost over every way to cut `costs` into `chunks` non-empty contiguous pieces.
double brute_force_best(const std::vector<double>& costs, int chunks, size_t start = 0) {
  const int remaining = static_cast<int>(costs.size() - start);
  if (chunks == 1) {
    double sum = 0.0;
    for (size_t i = start; i < costs.size(); ++i) sum += costs[i];
    return sum;
  }
  double best = std::numeric_limits<double>::infinity();
  double first = 0.0;
  for (int take = 1; take <= remaining - (chunks - 1); ++take) {
    first += costs[start + take - 1];
    best = std::min(best, std::max(first, brute_force_best(costs, chunks - 1, start + take)));
  }
  return best;
}

void expect_valid(const std::vector<int>& split, int layers, int chunks) {
  EXPECT_NO_THROW(validate_split(split, layers, chunks));
}

TEST(BalancedSplit, UniformCostsSplitEvenly) {
  EXPECT_EQ(balanced_split(std::vector<double>(8, 1.0), 4), (std::vector<int>{2, 2, 2, 2}));
}

TEST(BalancedSplit, HeavyEndsGetTheirOwnChunks) {
  const std::vector<double> costs = {10, 1, 1, 1, 1, 1, 1, 10};
  // {10} {1 x 6} {10}: the light middle fits in one chunk; any other cut puts 11 somewhere.
  EXPECT_EQ(balanced_split(costs, 3), (std::vector<int>{1, 6, 1}));
}

TEST(BalancedSplit, MatchesBruteForceOnRandomCosts) {
  std::mt19937 generator(3);
  std::uniform_real_distribution<double> cost(0.5, 20.0);
  for (int trial = 0; trial < 40; ++trial) {
    const int layers = 2 + trial % 10;
    const int chunks = 1 + trial % layers;
    std::vector<double> costs(layers);
    for (double& c : costs) c = cost(generator);
    const std::vector<int> split = balanced_split(costs, chunks);
    expect_valid(split, layers, chunks);
    EXPECT_DOUBLE_EQ(max_chunk_cost(costs, split), brute_force_best(costs, chunks)) << "trial " << trial;
  }
}

TEST(BalancedSplit, OneLayerPerChunkWhenCountsAreEqual) {
  EXPECT_EQ(balanced_split({5, 1, 7}, 3), (std::vector<int>{1, 1, 1}));
}

TEST(BalancedSplit, FewerLayersThanChunksNamesBoth) {
  try {
    balanced_split({1, 1, 1}, 4);
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kConfig);
    const std::string message = error.what();
    EXPECT_NE(message.find("3 layers"), std::string::npos) << message;
    EXPECT_NE(message.find("4 pipeline chunks"), std::string::npos) << message;
  }
}

TEST(ValidateSplit, RejectsWrongCountZeroEntryAndWrongSum) {
  EXPECT_NO_THROW(validate_split({3, 1, 2}, 6, 3));
  auto message_of = [](const std::vector<int>& split, int layers, int chunks) {
    try {
      validate_split(split, layers, chunks);
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message_of({3, 3}, 6, 3).find("has 2 entries"), std::string::npos);
  EXPECT_NE(message_of({3, 0, 3}, 6, 3).find("pipeline.split[1] is 0"), std::string::npos);
  EXPECT_NE(message_of({3, 1, 1}, 6, 3).find("sums to 5 layers but the model has 6"), std::string::npos);
}

TEST(SplitToRanges, ConsecutiveHalfOpenRanges) {
  const std::vector<LayerRange> ranges = split_to_ranges({2, 1, 3});
  ASSERT_EQ(ranges.size(), 3u);
  EXPECT_EQ(ranges[0].first, 0);
  EXPECT_EQ(ranges[0].last, 2);
  EXPECT_EQ(ranges[1].first, 2);
  EXPECT_EQ(ranges[1].last, 3);
  EXPECT_EQ(ranges[2].first, 3);
  EXPECT_EQ(ranges[2].last, 6);
}

}  // namespace
}  // namespace sluice::model
