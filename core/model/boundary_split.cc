// balanced_split with costs on the cuts between chunks (partition.h): bisection over the slowest chunk's cost.
#include <algorithm>
#include <cmath>
#include <string>

#include "core/common/error.h"
#include "core/model/partition.h"

namespace sluice::model {
namespace {

// A chunk [s, e) costs ends[e] - starts[s]: prefix sums of the layers, less the cut before s, plus the cut after
// e - 1. Both are computed once, so the check and the walk back compare the very same doubles.
struct ChunkCosts {
  std::vector<double> starts;  // starts[s] = prefix[s] - boundary before s
  std::vector<double> ends;    // ends[e] = prefix[e] + boundary after e - 1
  double cost(int start, int end) const { return ends[end] - starts[start]; }
};

ChunkCosts chunk_costs(const PartitionCosts& costs) {
  const int layers = static_cast<int>(costs.layers.size());
  ChunkCosts chunk{std::vector<double>(layers + 1, 0.0), std::vector<double>(layers + 1, 0.0)};
  double prefix = 0.0;
  for (int i = 0; i <= layers; ++i) {
    const double cut = i > 0 && i < layers ? costs.boundaries[i - 1] : 0.0;  // the cut between layers i-1 and i
    chunk.starts[i] = prefix - cut;
    chunk.ends[i] = prefix + cut;
    if (i < layers) prefix += costs.layers[i];
  }
  return chunk;
}

// reach[k][e]: the first e layers can be cut into k chunks of cost <= limit. A chunk may end at e after k-1 chunks
// that ended at any reachable s < e; the cheapest is the one with the largest starts[s], so one running maximum per
// row decides every e in O(layers).
std::vector<std::vector<char>> reachable(const ChunkCosts& chunk, int chunks, double limit, SplitWork* work) {
  const int layers = static_cast<int>(chunk.starts.size()) - 1;
  std::vector<std::vector<char>> reach(chunks + 1, std::vector<char>(layers + 1, 0));
  reach[0][0] = 1;
  for (int k = 1; k <= chunks; ++k) {
    double best_start = -INFINITY;
    for (int e = 1; e <= layers; ++e) {
      if (reach[k - 1][e - 1]) best_start = std::max(best_start, chunk.starts[e - 1]);
      if (work != nullptr) ++work->candidate_costs;
      reach[k][e] = best_start > -INFINITY && chunk.ends[e] - best_start <= limit;
    }
  }
  return reach;
}

// The split under `limit` (reach[chunks][layers] must hold): from the last chunk back, each starting as late as
// the limit allows.
std::vector<int> walk_back(const ChunkCosts& chunk, const std::vector<std::vector<char>>& reach, double limit) {
  const int chunks = static_cast<int>(reach.size()) - 1;
  std::vector<int> split(chunks);
  int end = static_cast<int>(chunk.starts.size()) - 1;
  for (int k = chunks; k >= 1; --k) {
    int start = end - 1;
    while (!(reach[k - 1][start] && chunk.cost(start, end) <= limit)) --start;
    split[k - 1] = end - start;
    end = start;
  }
  return split;
}

void check_boundaries(const PartitionCosts& costs) {
  if (costs.boundaries.size() != costs.layers.size()) {
    throw Error(ErrorCode::kInvalidArgument, "partition costs: " + std::to_string(costs.boundaries.size()) +
                                                 " boundary costs for " + std::to_string(costs.layers.size()) +
                                                 " layers (one per layer, or none)");
  }
  for (size_t i = 0; i < costs.boundaries.size(); ++i) {
    if (!(costs.boundaries[i] >= 0.0) || !std::isfinite(costs.boundaries[i])) {
      throw Error(ErrorCode::kInvalidArgument, "the cut after layer " + std::to_string(i) + " has cost " +
                                                   std::to_string(costs.boundaries[i]) + "; costs must be >= 0");
    }
  }
}

}  // namespace

std::vector<int> balanced_split(const PartitionCosts& costs, int chunks, SplitWork* work) {
  const bool free_cuts = std::all_of(costs.boundaries.begin(), costs.boundaries.end(), [](double b) { return b == 0.0; });
  if (free_cuts) return balanced_split(costs.layers, chunks, work);
  check_split_request(costs.layers, chunks);
  check_boundaries(costs);
  for (double c : costs.layers) {
    if (!std::isfinite(c)) throw Error(ErrorCode::kInvalidArgument, "a layer cost is not finite");
  }
  const ChunkCosts chunk = chunk_costs(costs);
  const int layers = static_cast<int>(costs.layers.size());
  // Every chunk of any split costs at most all layers plus the two dearest cuts: a limit that always fits.
  double high = chunk.ends[layers] - chunk.starts[0] + 2.0 * *std::max_element(costs.boundaries.begin(), costs.boundaries.end());
  double low = 0.0;
  while (high - low > 1e-12 * high) {
    const double middle = low + (high - low) / 2.0;
    if (middle <= low || middle >= high) break;  // no double between them
    if (reachable(chunk, chunks, middle, work)[chunks][layers]) {
      high = middle;
    } else {
      low = middle;
    }
  }
  return walk_back(chunk, reachable(chunk, chunks, high, work), high);
}

double slowest_chunk(const PartitionCosts& costs, const std::vector<int>& split) {
  const PartitionCosts full{costs.layers, costs.boundaries.empty() ? std::vector<double>(costs.layers.size(), 0.0)
                                                                   : costs.boundaries};
  const ChunkCosts chunk = chunk_costs(full);
  double slowest = 0.0;
  int start = 0;
  for (int count : split) {
    slowest = std::max(slowest, chunk.cost(start, start + count));
    start += count;
  }
  return slowest;
}

std::vector<int> choose_split(const std::vector<int>& configured, const PartitionCosts& costs, int chunks) {
  if (configured.empty()) return balanced_split(costs, chunks);
  validate_split(configured, static_cast<int>(costs.layers.size()), chunks);
  return configured;
}

}  // namespace sluice::model
