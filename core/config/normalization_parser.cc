#include "core/config/normalization_parser.h"

#include <cmath>
#include <string>
#include <vector>

#include "core/common/error.h"

namespace sluice::config {
namespace {

// The most samples `auto` may gather: every rank holds samples x features doubles while computing the statistics.
constexpr int64_t kMaxAutoSamples = int64_t{1} << 20;

std::string length_problem(const std::string& key, std::size_t got, int64_t features, int64_t channels,
                           const std::string& what) {
  const std::string per_channel = channels > 0 ? " or " + std::to_string(channels) + " (one per channel)" : "";
  return "expected " + std::to_string(features) + " entries (one per " + what + ")" + per_channel + ", got " +
         std::to_string(got) + " (normalization." + key + ")";
}

// normalization.<side>_mean / _std: a list of finite numbers (std: each > 0), one per feature when known, or one
// per channel when the side is a field of `channels` channels (-1: rows).
std::vector<double> parse_values(const ConfigNode& list, bool positive, int64_t features, int64_t channels,
                                 const std::string& key, const std::string& what) {
  std::vector<double> values;
  for (const ConfigNode& entry : list.elements()) {
    const double value = entry.as_double();
    if (!std::isfinite(value) || (positive && !(value > 0.0))) {
      entry.fail(std::string("expected a finite ") + (positive ? "positive " : "") + "number, got " +
                 entry.describe_value());
    }
    values.push_back(value);
  }
  const bool per_channel = channels > 0 && values.size() == static_cast<std::size_t>(channels);
  if (features >= 0 && values.size() != static_cast<std::size_t>(features) && !per_channel) {
    list.fail(length_problem(key, values.size(), features, channels, what));
  }
  return values;
}

// inputs / targets: the mode, and a given side's lists (both, or neither when normalization.file holds them).
NormalizationSide parse_side(const ConfigNode& node, const std::string& side, int64_t features, int64_t channels,
                             const std::string& what) {
  NormalizationSide result;
  if (node.has(side)) {
    const std::string name = node.child(side).as_choice(normalization_mode_names());
    for (std::size_t i = 0; i < normalization_mode_names().size(); ++i) {
      if (normalization_mode_names()[i] == name) result.mode = static_cast<NormalizationMode>(i);
    }
  }
  const bool given = result.mode == NormalizationMode::kGiven;
  const std::string mean_key = side + "_mean", std_key = side + "_std";
  for (const std::string& key : {mean_key, std_key}) {
    if (!node.has(key)) continue;
    const ConfigNode list = node.child(key);
    if (!given) {
      list.fail(key + " only applies with " + side + ": given (" + side + " is " +
                normalization_mode_name(result.mode) + ")");
    }
    (key == mean_key ? result.mean : result.std) = parse_values(list, key == std_key, features, channels, key, what);
  }
  if (given && node.has(mean_key) != node.has(std_key)) {
    node.fail(side + ": given needs both " + mean_key + " and " + std_key + " (or neither, with normalization.file)");
  }
  if (given && !node.has(mean_key) && !node.has("file")) {
    node.fail(side + ": given needs " + mean_key + " and " + std_key + " (lists of " + std::to_string(features) +
              " numbers, one per " + what + ") or normalization.file");
  }
  return result;
}

}  // namespace

NormalizationSpec parse_normalization(const ConfigNode& node, int64_t input_features, int64_t output_features,
                                      model::LossKind loss, int64_t input_channels, int64_t output_channels) {
  node.require_map_with_keys(
      {"inputs", "targets", "samples", "file", "inputs_mean", "inputs_std", "targets_mean", "targets_std"}, "normalization");
  NormalizationSpec spec;
  spec.inputs = parse_side(node, "inputs", input_features, input_channels, "input feature");
  spec.targets = parse_side(node, "targets", output_features, output_channels, "model output");
  if (spec.targets.mode != NormalizationMode::kNone && loss == model::LossKind::kCrossEntropy) {
    node.child("targets").fail("targets: " + normalization_mode_name(spec.targets.mode) +
                               " cannot be used with loss: cross_entropy (its targets are class probabilities); "
                               "use targets: none");
  }
  if (node.has("file")) {
    const ConfigNode file = node.child("file");
    spec.file = file.as_string();
    if (spec.file.empty()) file.fail("expected the path of an HDF5 file of statistics");
    const bool given_from_file = (spec.inputs.mode == NormalizationMode::kGiven && spec.inputs.mean.empty()) ||
                                 (spec.targets.mode == NormalizationMode::kGiven && spec.targets.mean.empty());
    if (!given_from_file) file.fail("file only applies when inputs or targets is given without lists");
  }
  if (node.has("samples")) {
    const ConfigNode samples = node.child("samples");
    if (!spec.any_auto()) samples.fail("samples only applies when inputs or targets is auto");
    spec.samples = samples.as_int();
    if (spec.samples <= 0 || spec.samples > kMaxAutoSamples) {
      samples.fail("expected a number of samples in 1.." + std::to_string(kMaxAutoSamples) + ", got " +
                   samples.describe_value());
    }
  }
  return spec;
}

}  // namespace sluice::config
