#include "core/runtime/normalization.h"

#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>

#include "core/common/error.h"

namespace sluice::runtime {
namespace {

// A std that cannot divide safely (zero: a constant feature; subnormal) is 1: the feature is only shifted.
float guarded_std(double std) {
  const float value = static_cast<float>(std);
  return std::isnormal(value) ? value : 1.0f;
}

// A given side: one value per feature, or (a field side, points > 1) one per channel.
// The parsers check the given statistics as doubles (finite; std > 0), but they are used as floats: a mean beyond
// FLT_MAX becomes inf and a std below FLT_MIN becomes 0 or subnormal, and every sample would be normalized to inf
// or NaN. Refused, naming the entry, rather than turned into a plausible-looking run.
void check_float_statistics(const FeatureScaling& scaling, const std::string& name, const std::string& file) {
  const std::string from = file.empty() ? "" : " (from the config's list or normalization.file \"" + file + "\")";
  for (std::size_t i = 0; i < scaling.mean.size(); ++i) {
    if (!std::isfinite(scaling.mean[i])) {
      throw Error(ErrorCode::kConfig, "config: normalization." + name + "_mean: entry " + std::to_string(i) +
                                          " does not fit in a float (|mean| above 3.4e38)" + from);
    }
  }
  for (std::size_t i = 0; i < scaling.std.size(); ++i) {
    if (!std::isnormal(scaling.std[i]) || !(scaling.std[i] > 0.0f)) {
      throw Error(ErrorCode::kConfig, "config: normalization." + name + "_std: entry " + std::to_string(i) +
                                          " is not a positive normal float (std must lie in [1.2e-38, 3.4e38])" +
                                          from);
    }
  }
}

FeatureScaling given(const config::NormalizationSide& side, const std::string& name, int64_t features,
                     int64_t points, const std::string& file) {
  const std::string what = name == "inputs" ? "input feature" : "model output";
  const int64_t channels = points > 1 ? features / points : -1;
  const bool per_channel = channels > 0 && side.mean.size() == static_cast<std::size_t>(channels);
  for (const auto& [key, values] :
       {std::make_pair(name + "_mean", &side.mean), std::make_pair(name + "_std", &side.std)}) {
    const auto wanted = static_cast<std::size_t>(per_channel ? channels : features);
    if (values->size() != wanted) {
      throw Error(ErrorCode::kConfig,
                  "config: normalization." + key + ": expected " + std::to_string(features) + " entries (one per " +
                      what + ")" + (channels > 0 ? " or " + std::to_string(channels) + " (one per channel)" : "") +
                      ", got " + std::to_string(values->size()) +
                      (file.empty() ? "" : " (from the config's list or normalization.file \"" + file + "\")"));
    }
  }
  FeatureScaling scaling;
  scaling.mean.assign(side.mean.begin(), side.mean.end());
  scaling.std.assign(side.std.begin(), side.std.end());
  scaling.points = per_channel ? points : 1;
  check_float_statistics(scaling, name, file);
  return scaling;
}

// Per channel: channel c of sample r is the `points` values from (r · channels + c) · points on.
FeatureScaling channel_statistics(const float* samples, int64_t rows, int64_t channels, int64_t points) {
  const auto c_count = static_cast<std::size_t>(channels);
  const auto p_count = static_cast<std::size_t>(points);
  std::vector<double> sum(c_count, 0.0), squares(c_count, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < c_count; ++c) {
      const float* values = samples + (static_cast<std::size_t>(r) * c_count + c) * p_count;
      for (std::size_t k = 0; k < p_count; ++k) sum[c] += values[k];
    }
  }
  const double n = static_cast<double>(rows) * static_cast<double>(points);
  for (int64_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < c_count; ++c) {
      const float* values = samples + (static_cast<std::size_t>(r) * c_count + c) * p_count;
      for (std::size_t k = 0; k < p_count; ++k) {
        const double d = values[k] - sum[c] / n;
        squares[c] += d * d;
      }
    }
  }
  FeatureScaling scaling;
  scaling.points = points;
  for (std::size_t c = 0; c < c_count; ++c) {
    scaling.mean.push_back(static_cast<float>(sum[c] / n));
    scaling.std.push_back(guarded_std(std::sqrt(squares[c] / n)));
  }
  return scaling;
}

}  // namespace

FeatureScaling statistics_of(const float* samples, int64_t rows, int64_t features, int64_t points) {
  if (rows <= 0 || features <= 0) throw Error(ErrorCode::kInternal, "normalization statistics of no samples");
  if (points > 1) {
    if (features % points != 0) throw Error(ErrorCode::kInternal, "normalization: points do not divide features");
    return channel_statistics(samples, rows, features / points, points);
  }
  const auto f = static_cast<std::size_t>(features);
  std::vector<double> sum(f, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    for (std::size_t j = 0; j < f; ++j) sum[j] += samples[static_cast<std::size_t>(r) * f + j];
  }
  std::vector<double> mean(f);
  for (std::size_t j = 0; j < f; ++j) mean[j] = sum[j] / static_cast<double>(rows);
  std::vector<double> squares(f, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    for (std::size_t j = 0; j < f; ++j) {
      const double d = samples[static_cast<std::size_t>(r) * f + j] - mean[j];
      squares[j] += d * d;
    }
  }
  FeatureScaling scaling;
  for (std::size_t j = 0; j < f; ++j) {
    scaling.mean.push_back(static_cast<float>(mean[j]));
    scaling.std.push_back(guarded_std(std::sqrt(squares[j] / static_cast<double>(rows))));
  }
  return scaling;
}

std::vector<float> normalized(const float* values, int64_t rows, const FeatureScaling& scaling) {
  if (!scaling.active()) return {};
  const std::size_t f = scaling.mean.size();
  if (scaling.points > 1) {  // per channel: statistic i / points of each sample's f · points values
    const auto p = static_cast<std::size_t>(scaling.points);
    std::vector<float> out(static_cast<std::size_t>(rows) * f * p);
    for (std::size_t i = 0; i < out.size(); ++i) {
      const std::size_t c = (i / p) % f;
      out[i] = (values[i] - scaling.mean[c]) / scaling.std[c];
    }
    return out;
  }
  std::vector<float> out(static_cast<std::size_t>(rows) * f);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = (values[i] - scaling.mean[i % f]) / scaling.std[i % f];
  return out;
}

void denormalize(float* values, int64_t rows, const FeatureScaling& scaling) {
  if (!scaling.active()) return;
  const std::size_t f = scaling.mean.size();
  if (scaling.points > 1) {
    const auto p = static_cast<std::size_t>(scaling.points);
    const std::size_t count = static_cast<std::size_t>(rows) * f * p;
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t c = (i / p) % f;
      values[i] = values[i] * scaling.std[c] + scaling.mean[c];
    }
    return;
  }
  const std::size_t count = static_cast<std::size_t>(rows) * f;
  for (std::size_t i = 0; i < count; ++i) values[i] = values[i] * scaling.std[i % f] + scaling.mean[i % f];
}

void Normalization::configure(const config::NormalizationSpec& spec, int64_t input_features,
                              int64_t output_features, int64_t input_points, int64_t output_points) {
  using config::NormalizationMode;
  FeatureScaling inputs, targets;
  if (spec.inputs.mode == NormalizationMode::kGiven) {
    inputs = given(spec.inputs, "inputs", input_features, input_points, spec.file);
  }
  if (spec.targets.mode == NormalizationMode::kGiven) {
    targets = given(spec.targets, "targets", output_features, output_points, spec.file);
  }
  spec_ = spec;
  input_features_ = input_features;
  output_features_ = output_features;
  input_points_ = input_points;
  output_points_ = output_points;
  inputs_ = std::move(inputs);
  targets_ = std::move(targets);
  inputs_pending_ = spec.inputs.mode == NormalizationMode::kAuto;
  targets_pending_ = spec.targets.mode == NormalizationMode::kAuto;
}

void Normalization::set_inputs(FeatureScaling scaling) {
  if (!scaling.active()) return;
  inputs_ = std::move(scaling);
  inputs_pending_ = false;
}

void Normalization::set_targets(FeatureScaling scaling) {
  if (!scaling.active()) return;
  targets_ = std::move(scaling);
  targets_pending_ = false;
}

void Normalization::require_ready(const std::string& what) const {
  if (!pending()) return;
  throw Error(ErrorCode::kState,
              what + ": normalization " + std::string(inputs_pending_ ? "inputs" : "targets") +
                  ": auto has no statistics yet; they come from the first training call's samples (train a step "
                  "first, load a checkpoint that has them, or give them: normalization." +
                  (inputs_pending_ ? "inputs" : "targets") + ": given)");
}

}  // namespace sluice::runtime
