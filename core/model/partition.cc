#include "core/model/partition.h"

#include <algorithm>
#include <limits>
#include <string>

#include "core/common/error.h"

namespace sluice::model {

std::vector<int> balanced_split(const std::vector<double>& layer_costs, int chunks) {
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
  std::vector<double> prefix(layers + 1, 0.0);
  for (int i = 0; i < layers; ++i) prefix[i + 1] = prefix[i] + layer_costs[i];

  // best[k][i]: smallest possible maximum chunk cost putting the first i layers into k chunks;
  // cut[k][i]: where the k-th chunk starts in that best split.
  const double infinity = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> best(chunks + 1, std::vector<double>(layers + 1, infinity));
  std::vector<std::vector<int>> cut(chunks + 1, std::vector<int>(layers + 1, 0));
  best[0][0] = 0.0;
  for (int k = 1; k <= chunks; ++k) {
    for (int i = k; i <= layers - (chunks - k); ++i) {
      // Strict `<` keeps the first start found among ties; the fixed order makes the result reproducible.
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
  int end = layers;
  for (int k = chunks; k >= 1; --k) {
    const int start = cut[k][end];
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
