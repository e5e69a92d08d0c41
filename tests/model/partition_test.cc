// Partitioning: the balanced split is optimal (checked against brute force over all splits), explicit splits
// are validated, and errors name the numbers involved.
#include "core/model/partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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

// The exhaustive O(chunks x layers^2) programme balanced_split replaced: the same recurrence, every start
// scanned from the last, strict `<` keeping the latest start among ties.
std::vector<int> exhaustive_split(const std::vector<double>& costs, int chunks) {
  const int layers = static_cast<int>(costs.size());
  std::vector<double> prefix(layers + 1, 0.0);
  for (int i = 0; i < layers; ++i) prefix[i + 1] = prefix[i] + costs[i];
  const double infinity = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> best(chunks + 1, std::vector<double>(layers + 1, infinity));
  std::vector<std::vector<int>> cut(chunks + 1, std::vector<int>(layers + 1, 0));
  best[0][0] = 0.0;
  for (int k = 1; k <= chunks; ++k) {
    for (int i = k; i <= layers - (chunks - k); ++i) {
      for (int start = i - 1; start >= k - 1; --start) {
        const double cost = std::max(best[k - 1][start], prefix[i] - prefix[start]);
        if (cost < best[k][i]) {
          best[k][i] = cost;
          cut[k][i] = start;
        }
      }
    }
  }
  std::vector<int> split(chunks);
  for (int k = chunks, end = layers; k >= 1; --k) {
    split[k - 1] = end - cut[k][end];
    end = cut[k][end];
  }
  return split;
}

// Whether `costs` can be cut into `chunks` non-empty pieces of at most `limit` each: greedy, each piece as long as
// the limit and the layers the later pieces need allow.
bool fits_under(const std::vector<double>& costs, int chunks, double limit) {
  const int layers = static_cast<int>(costs.size());
  int next = 0;
  for (int k = 0; k < chunks; ++k) {
    double sum = 0.0;
    const int first = next;
    while (next < layers - (chunks - k - 1) && (next == first || sum + costs[next] <= limit)) sum += costs[next++];
    if (sum > limit) return false;
  }
  return next == layers;
}

TEST(BalancedSplit, SameSplitsAsTheExhaustiveProgrammeIncludingTies) {
  std::mt19937 generator(11);
  // Small integer costs with zeros: many ties and plateaus, where the choice among equal splits shows.
  std::uniform_int_distribution<int> cost(0, 4);
  for (int trial = 0; trial < 300; ++trial) {
    const int layers = 1 + trial % 37;
    const int chunks = 1 + (trial * 7) % layers;
    std::vector<double> costs(layers);
    for (double& c : costs) c = trial % 3 == 0 ? cost(generator) * 0.1 : cost(generator);
    EXPECT_EQ(balanced_split(costs, chunks), exhaustive_split(costs, chunks))
        << "trial " << trial << ": " << layers << " layers, " << chunks << " chunks";
  }
}

// 40 000 layers once took seconds (chunks x layers^2 / 2 = 3.2e9 candidates for 4 chunks). The work counter shows
// the programme is linear in the layers, without a clock: at most ~5 candidates per chunk and layer (two pointers
// that never go back, two costs at the crossing, one failed step each), where a quadratic one evaluates thousands.
TEST(BalancedSplit, FortyThousandLayersWithLinearWork) {
  const int layers = 40000;
  std::mt19937 generator(5);
  std::uniform_real_distribution<double> cost(1.0, 100.0);
  std::vector<double> costs(layers);
  for (double& c : costs) c = cost(generator);
  for (int chunks : {1, 4, 64}) {
    SplitWork work;
    const std::vector<int> split = balanced_split(costs, chunks, &work);
    expect_valid(split, layers, chunks);
    EXPECT_LE(work.candidate_costs, 6LL * chunks * (layers + 1)) << chunks << " chunks";
    EXPECT_GT(work.candidate_costs, 0) << "the counter must count";
    // Optimal: no split fits under any smaller limit.
    const double achieved = max_chunk_cost(costs, split);
    EXPECT_TRUE(fits_under(costs, chunks, achieved)) << chunks << " chunks";
    EXPECT_FALSE(fits_under(costs, chunks, std::nextafter(achieved, 0.0) * (1 - 1e-12))) << chunks << " chunks";
  }
  EXPECT_EQ(balanced_split(std::vector<double>(layers, 2.5), 4), (std::vector<int>(4, 10000)));
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
