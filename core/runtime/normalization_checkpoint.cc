#include "core/runtime/normalization_checkpoint.h"

#include <cmath>
#include <string>
#include <vector>

#include "checkpoint/format.h"
#include "checkpoint/layer_paths.h"
#include "core/common/error.h"

namespace sluice::runtime {
namespace {

void add_side(const FeatureScaling& scaling, const char* mean_name, const char* std_name,
              checkpoint::Snapshot& snapshot) {
  if (!scaling.active()) return;
  const auto features = static_cast<int64_t>(scaling.mean.size());
  snapshot.entries.push_back({checkpoint::normalization_path(mean_name), {features}, scaling.mean});
  snapshot.entries.push_back({checkpoint::normalization_path(std_name), {features}, scaling.std});
}

// [features] (per feature) or, for a field side of `points` points per channel, [features / points] (per channel).
FeatureScaling read_side(const checkpoint::Reader& reader, const char* mean_name, const char* std_name,
                         int64_t features, int64_t points) {
  const std::string mean_path = checkpoint::normalization_path(mean_name);
  const std::string std_path = checkpoint::normalization_path(std_name);
  const bool has_mean = reader.contains(mean_path);
  if (has_mean != reader.contains(std_path)) {
    throw Error(ErrorCode::kCheckpoint, "checkpoint '" + reader.file() + "', dataset " +
                                            (has_mean ? std_path : mean_path) + ": missing (the file has " +
                                            (has_mean ? mean_path : std_path) + ")");
  }
  FeatureScaling scaling;
  if (!has_mean) return scaling;
  if (points > 1 && features % points == 0 && reader.dims(mean_path) == std::vector<int64_t>{features / points}) {
    features /= points;
    scaling.points = points;
  }
  scaling.mean = reader.read(mean_path, {features}).data;
  scaling.std = reader.read(std_path, {features}).data;
  for (int64_t j = 0; j < features; ++j) {
    const float mean = scaling.mean[static_cast<size_t>(j)];
    const float std = scaling.std[static_cast<size_t>(j)];
    if (!std::isfinite(mean) || !std::isfinite(std) || !(std > 0.0f)) {
      throw Error(ErrorCode::kCheckpoint, "checkpoint '" + reader.file() + "', dataset " +
                                              (std::isfinite(mean) ? std_path : mean_path) + ": entry " +
                                              std::to_string(j) + " is not a usable statistic (mean " +
                                              std::to_string(mean) + ", std " + std::to_string(std) + ")");
    }
  }
  return scaling;
}

}  // namespace

void add_normalization_entries(const Normalization& normalization, int world_rank, checkpoint::Snapshot& snapshot) {
  if (world_rank != 0) return;  // one writer per dataset
  add_side(normalization.inputs(), checkpoint::kNormalizationInputsMean, checkpoint::kNormalizationInputsStd,
           snapshot);
  add_side(normalization.targets(), checkpoint::kNormalizationTargetsMean, checkpoint::kNormalizationTargetsStd,
           snapshot);
}

SavedNormalization read_normalization(const checkpoint::Reader& reader, int64_t input_features,
                                      int64_t output_features, int64_t input_points, int64_t output_points) {
  SavedNormalization saved;
  saved.inputs = read_side(reader, checkpoint::kNormalizationInputsMean, checkpoint::kNormalizationInputsStd,
                           input_features, input_points);
  saved.targets = read_side(reader, checkpoint::kNormalizationTargetsMean, checkpoint::kNormalizationTargetsStd,
                            output_features, output_points);
  return saved;
}

}  // namespace sluice::runtime
