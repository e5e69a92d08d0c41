#include "core/config/normalization_parser.h"

#include <cmath>
#include <string>
#include <vector>

#include "core/common/error.h"

namespace sluice::config {
namespace {

// The most samples `auto` may gather: every rank holds samples x features doubles while computing the statistics.
constexpr int64_t kMaxAutoSamples = int64_t{1} << 20;

std::string length_problem(const std::string& key, std::size_t got, int64_t features, const std::string& what) {
  return "expected " + std::to_string(features) + " entries (one per " + what + "), got " + std::to_string(got) +
         " (normalization." + key + ")";
}

// normalization.<side>_mean / _std: a list of finite numbers (std: each > 0), one per feature when known.
std::vector<double> parse_values(const ConfigNode& list, bool positive, int64_t features, const std::string& key,
                                 const std::string& what) {
  std::vector<double> values;
  for (const ConfigNode& entry : list.elements()) {
    const double value = entry.as_double();
    if (!std::isfinite(value) || (positive && !(value > 0.0))) {
      entry.fail(std::string("expected a finite ") + (positive ? "positive " : "") + "number, got " +
                 entry.describe_value());
    }
    values.push_back(value);
  }
  if (features >= 0 && values.size() != static_cast<std::size_t>(features)) {
    list.fail(length_problem(key, values.size(), features, what));
  }
  return values;
}

NormalizationSide parse_side(const ConfigNode& node, const std::string& side, int64_t features,
                             const std::string& what) {
  NormalizationSide result;
  if (node.has(side)) {
    const std::string name = node.child(side).as_choice(normalization_mode_names());
    for (std::size_t i = 0; i < normalization_mode_names().size(); ++i) {
      if (normalization_mode_names()[i] == name) result.mode = static_cast<NormalizationMode>(i);
    }
  }
  for (const std::string& stat : {std::string("mean"), std::string("std")}) {
    const std::string key = side + "_" + stat;
    if (!node.has(key)) {
      if (result.mode == NormalizationMode::kGiven) {
        node.fail(side + ": given needs " + key + " (a list of " + std::to_string(features) + " numbers, one per " +
                  what + ")");
      }
      continue;
    }
    const ConfigNode list = node.child(key);
    if (result.mode != NormalizationMode::kGiven) {
      list.fail(key + " only applies with " + side + ": given (" + side + " is " +
                normalization_mode_name(result.mode) + ")");
    }
    (stat == "mean" ? result.mean : result.std) = parse_values(list, stat == "std", features, key, what);
  }
  return result;
}

}  // namespace

NormalizationSpec parse_normalization(const ConfigNode& node, int64_t input_features, int64_t output_features,
                                      model::LossKind loss) {
  node.require_map_with_keys(
      {"inputs", "targets", "samples", "inputs_mean", "inputs_std", "targets_mean", "targets_std"}, "normalization");
  NormalizationSpec spec;
  spec.inputs = parse_side(node, "inputs", input_features, "input feature");
  spec.targets = parse_side(node, "targets", output_features, "model output");
  if (spec.targets.mode != NormalizationMode::kNone && loss == model::LossKind::kCrossEntropy) {
    node.child("targets").fail("targets: " + normalization_mode_name(spec.targets.mode) +
                               " cannot be used with loss: cross_entropy (its targets are class probabilities); "
                               "use targets: none");
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
