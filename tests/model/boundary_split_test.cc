// The balanced split with costs on its cuts (core/model/partition.h): optimal against every split of small
// models, the same as the plain split when cuts are free, a wide cut avoided, bad costs refused, and tens of
// thousands of layers in O(chunks x layers) work per candidate limit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/model/partition.h"

namespace sluice::model {
namespace {

// Every way to cut the layers into `chunks` non-empty pieces, its slowest chunk as slowest_chunk weighs it.
double brute_force_best(const PartitionCosts& costs, int chunks, std::vector<int>& split) {
  const int layers = static_cast<int>(costs.layers.size());
  const int done = [&] {
    int sum = 0;
    for (int c : split) sum += c;
    return sum;
  }();
  if (static_cast<int>(split.size()) + 1 == chunks) {
    split.push_back(layers - done);
    const double slowest = slowest_chunk(costs, split);
    split.pop_back();
    return slowest;
  }
  double best = std::numeric_limits<double>::infinity();
  for (int take = 1; done + take <= layers - (chunks - 1 - static_cast<int>(split.size())); ++take) {
    split.push_back(take);
    best = std::min(best, brute_force_best(costs, chunks, split));
    split.pop_back();
  }
  return best;
}

double brute_force_best(const PartitionCosts& costs, int chunks) {
  std::vector<int> split;
  return brute_force_best(costs, chunks, split);
}

TEST(BoundarySplit, AWideCutIsAvoided) {
  // Equal layers; the cut in the middle sends a wide field, the others almost nothing.
  const PartitionCosts costs{{1, 1, 1, 1}, {0.1, 10, 0.1, 0}};
  EXPECT_EQ(balanced_split(costs.layers, 2), (std::vector<int>{2, 2}));  // FLOPs alone cut the wide field
  const std::vector<int> split = balanced_split(costs, 2);
  EXPECT_EQ(split, (std::vector<int>{3, 1}));  // {1, 3} costs the same; the last chunk starts as late as it can
  EXPECT_DOUBLE_EQ(slowest_chunk(costs, split), 3.1);
  EXPECT_DOUBLE_EQ(slowest_chunk(costs, {2, 2}), 12.0);
}

TEST(BoundarySplit, OptimalAgainstEverySplitOfSmallModels) {
  std::mt19937 generator(17);
  std::uniform_real_distribution<double> layer(0.5, 20.0);
  std::uniform_real_distribution<double> cut(0.0, 15.0);
  for (int trial = 0; trial < 200; ++trial) {
    const int layers = 1 + trial % 11;
    const int chunks = 1 + (trial * 5) % layers;
    PartitionCosts costs;
    for (int i = 0; i < layers; ++i) {
      costs.layers.push_back(layer(generator));
      costs.boundaries.push_back(trial % 4 == 0 ? std::floor(cut(generator)) : cut(generator));
    }
    const std::vector<int> split = balanced_split(costs, chunks);
    EXPECT_NO_THROW(validate_split(split, layers, chunks));
    const double best = brute_force_best(costs, chunks);
    EXPECT_LE(slowest_chunk(costs, split), best * (1 + 1e-11)) << "trial " << trial;
  }
}

TEST(BoundarySplit, FreeCutsGiveThePlainSplit) {
  std::mt19937 generator(23);
  std::uniform_int_distribution<int> cost(0, 4);
  for (int trial = 0; trial < 100; ++trial) {
    const int layers = 1 + trial % 29;
    const int chunks = 1 + (trial * 7) % layers;
    PartitionCosts costs{std::vector<double>(layers), std::vector<double>(layers, 0.0)};
    for (double& c : costs.layers) c = cost(generator);
    EXPECT_EQ(balanced_split(costs, chunks), balanced_split(costs.layers, chunks)) << "trial " << trial;
    costs.boundaries.clear();  // none given: the same
    EXPECT_EQ(balanced_split(costs, chunks), balanced_split(costs.layers, chunks)) << "trial " << trial;
  }
}

// Bisection over the limit: each candidate is one O(chunks x layers) check, about 40 candidates to 1e-12.
TEST(BoundarySplit, FortyThousandLayersInLinearWorkPerCandidate) {
  const int layers = 40000;
  std::mt19937 generator(5);
  std::uniform_real_distribution<double> cost(1.0, 100.0);
  PartitionCosts costs{std::vector<double>(layers), std::vector<double>(layers)};
  for (double& c : costs.layers) c = cost(generator);
  for (double& c : costs.boundaries) c = cost(generator);
  for (int chunks : {1, 4, 64}) {
    SplitWork work;
    const std::vector<int> split = balanced_split(costs, chunks, &work);
    EXPECT_NO_THROW(validate_split(split, layers, chunks));
    EXPECT_LE(work.candidate_costs, 70LL * chunks * layers) << chunks << " chunks";
    EXPECT_GT(work.candidate_costs, 0);
  }
}

TEST(BoundarySplit, BadCutCostsAreRefusedNamingTheCut) {
  auto message_of = [](const PartitionCosts& costs) {
    try {
      balanced_split(costs, 2);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message_of({{1, 1, 1}, {1, 1}}).find("2 boundary costs for 3 layers"), std::string::npos);
  EXPECT_NE(message_of({{1, 1, 1}, {1, -2, 0}}).find("the cut after layer 1 has cost -2"), std::string::npos);
  EXPECT_NE(message_of({{1, 1, 1}, {1, NAN, 0}}).find("the cut after layer 1"), std::string::npos);
  EXPECT_NE(message_of({{1}, {1}}).find("cannot split 1 layers into 2"), std::string::npos);
  EXPECT_NE(message_of({{1, -1, 1}, {1, 1, 0}}).find("layer 1 has cost -1"), std::string::npos);
}

}  // namespace
}  // namespace sluice::model
