#include "core/model/partition.h"

#include <algorithm>
#include <limits>
#include <string>

#include "core/common/error.h"

namespace sluice::model {

namespace {


// One row of the dynamic programme: from `previous[s]` (the best maximum chunk cost for the first s layers in
// k-1 chunks) computes `current[i]` (first i layers in k chunks) and the start of the k-th chunk, `cuts[i]`, for
// i in [k, last_end]. The cost of starting the k-th chunk at s, max(previous[s], prefix[i] - prefix[s]), is the
// larger of a non-decreasing and a non-increasing function of s (costs are >= 0), so its minimum sits where they
// cross, and that crossing only moves right as i grows: two pointers that never go back make the row O(layers)
// instead of O(layers^2). Among equal minima the largest start is kept, as the exhaustive scan did.
void fill_row(const std::vector<double>& prefix, const std::vector<double>& previous, int k, int last_end,
              std::vector<double>& current, int* cuts, SplitWork* work) {
  int crossing = k - 2;  // last start s with previous[s] <= prefix[i] - prefix[s]; k - 2 = none yet
  int chosen = k - 1;    // the largest start with the minimal cost, for the current i
  auto start_cost = [&](int start, int end) {
    if (work != nullptr) ++work->candidate_costs;
    return std::max(previous[start], prefix[end] - prefix[start]);
  };
  for (int i = k; i <= last_end; ++i) {
    while (crossing + 1 <= i - 1 && previous[crossing + 1] <= prefix[i] - prefix[crossing + 1]) {
      if (work != nullptr) ++work->candidate_costs;
      ++crossing;
    }
    // The minimum is at the crossing (cost = the last chunk) or just after it (cost = the earlier chunks).
    double least = std::numeric_limits<double>::infinity();
    if (crossing >= k - 1) least = start_cost(crossing, i);
    if (crossing + 1 <= i - 1) least = std::min(least, start_cost(crossing + 1, i));
    // Past the crossing the cost is previous[s], non-decreasing: the largest start still at the minimum.
    chosen = std::max(chosen, std::max(crossing, k - 1));
    while (chosen + 1 <= i - 1 && start_cost(chosen + 1, i) <= least) ++chosen;
    current[i] = least;
    cuts[i] = chosen;
  }
}

}  // namespace

void check_split_request(const std::vector<double>& layer_costs, int chunks) {
  const int layers = static_cast<int>(layer_costs.size());
  if (chunks < 1) throw Error(ErrorCode::kConfig, "a partition needs at least 1 chunk, got " + std::to_string(chunks));
  if (layers < chunks) {
    throw Error(ErrorCode::kConfig, "cannot split " + std::to_string(layers) + " layers into " +
                                        std::to_string(chunks) + " pipeline chunks (stages x chunks per stage): " +
                                        "every chunk needs at least one layer");
  }
  for (int i = 0; i < layers; ++i) {
    if (!(layer_costs[i] >= 0.0)) {
      throw Error(ErrorCode::kInvalidArgument, "layer " + std::to_string(i) + " has cost " +
                                                   std::to_string(layer_costs[i]) + "; costs must be >= 0");
    }
  }
}

std::vector<int> balanced_split(const std::vector<double>& layer_costs, int chunks, SplitWork* work) {
  check_split_request(layer_costs, chunks);
  const int layers = static_cast<int>(layer_costs.size());
  std::vector<double> prefix(layers + 1, 0.0);
  for (int i = 0; i < layers; ++i) prefix[i + 1] = prefix[i] + layer_costs[i];

  // best rows k-1 and k: smallest possible maximum chunk cost putting the first i layers into k chunks;
  // cut[k][i]: where the k-th chunk starts in that best split (kept for every k, to walk back).
  const double infinity = std::numeric_limits<double>::infinity();
  std::vector<double> previous(layers + 1, infinity);
  std::vector<double> current(layers + 1, infinity);
  std::vector<int> cut(static_cast<std::size_t>(chunks + 1) * (layers + 1), 0);
  previous[0] = 0.0;
  for (int k = 1; k <= chunks; ++k) {
    std::fill(current.begin(), current.end(), infinity);
    fill_row(prefix, previous, k, layers - (chunks - k), current, &cut[static_cast<std::size_t>(k) * (layers + 1)],
             work);
    std::swap(previous, current);
  }
  std::vector<int> split(chunks);
  int end = layers;
  for (int k = chunks; k >= 1; --k) {
    const int start = cut[static_cast<std::size_t>(k) * (layers + 1) + end];
    split[k - 1] = end - start;
    end = start;
  }
  return split;
}

void validate_split(const std::vector<int>& split, int num_layers, int chunks) {
  if (static_cast<int>(split.size()) != chunks) {
    throw Error(ErrorCode::kConfig, "pipeline.split has " + std::to_string(split.size()) + " entries but there are " +
                                        std::to_string(chunks) + " chunks (stages x chunks per stage)");
  }
  long total = 0;
  for (size_t i = 0; i < split.size(); ++i) {
    if (split[i] < 1) {
      throw Error(ErrorCode::kConfig, "pipeline.split[" + std::to_string(i) + "] is " + std::to_string(split[i]) +
                                          "; every chunk needs at least one layer");
    }
    total += split[i];
  }
  if (total != num_layers) {
    throw Error(ErrorCode::kConfig, "pipeline.split sums to " + std::to_string(total) + " layers but the model has " +
                                        std::to_string(num_layers));
  }
}

std::vector<LayerRange> split_to_ranges(const std::vector<int>& split) {
  std::vector<LayerRange> ranges;
  int first = 0;
  for (int count : split) {
    ranges.push_back(LayerRange{first, first + count});
    first += count;
  }
  return ranges;
}

std::vector<int> choose_split(const std::vector<int>& configured, const std::vector<double>& layer_costs,
                              int chunks) {
  if (configured.empty()) return balanced_split(layer_costs, chunks);
  validate_split(configured, static_cast<int>(layer_costs.size()), chunks);
  return configured;
}

std::vector<double> layer_costs(const std::vector<std::unique_ptr<Layer>>& layers) {
  std::vector<double> costs;
  costs.reserve(layers.size());
  for (const auto& layer : layers) costs.push_back(layer->flops_per_sample());
  return costs;
}

}  // namespace sluice::model

namespace sluice::model {

std::vector<std::unique_ptr<Layer>> take_layers(std::vector<std::unique_ptr<Layer>>& all, LayerRange range) {
  if (range.first < 0 || range.last > static_cast<int>(all.size()) || range.first >= range.last) {
    throw Error(ErrorCode::kInvalidArgument, "layer range [" + std::to_string(range.first) + ", " +
                                                 std::to_string(range.last) + ") is not a non-empty range of the " +
                                                 std::to_string(all.size()) + " layers");
  }
  std::vector<std::unique_ptr<Layer>> taken;
  for (int i = range.first; i < range.last; ++i) {
    if (!all[i]) throw Error(ErrorCode::kState, "layer " + std::to_string(i) + " was already taken by another chunk");
    taken.push_back(std::move(all[i]));
  }
  return taken;
}

}  // namespace sluice::model
