#include "core/runtime/normalization.h"

#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>

#include "core/common/error.h"

namespace sluice::runtime {
namespace {

FeatureScaling given(const config::NormalizationSide& side, const std::string& name, int64_t features,
                     const std::string& file) {
  const std::string what = name == "inputs" ? "input feature" : "model output";
  for (const auto& [key, values] :
       {std::make_pair(name + "_mean", &side.mean), std::make_pair(name + "_std", &side.std)}) {
    if (values->size() != static_cast<std::size_t>(features)) {
      throw Error(ErrorCode::kConfig, "config: normalization." + key + ": expected " + std::to_string(features) +
                                          " entries (one per " + what + "), got " + std::to_string(values->size()) +
                                          (file.empty() ? "" : " (from the config's list or normalization.file \"" +
                                                                   file + "\")"));
    }
  }
  FeatureScaling scaling;
  scaling.mean.assign(side.mean.begin(), side.mean.end());
  scaling.std.assign(side.std.begin(), side.std.end());
  return scaling;
}

// A std that cannot divide safely (zero: a constant feature; subnormal) is 1: the feature is only shifted.
float guarded_std(double std) {
  const float value = static_cast<float>(std);
  return std::isnormal(value) ? value : 1.0f;
}

}  // namespace

FeatureScaling statistics_of(const float* samples, int64_t rows, int64_t features) {
  if (rows <= 0 || features <= 0) throw Error(ErrorCode::kInternal, "normalization statistics of no samples");
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
  std::vector<float> out(static_cast<std::size_t>(rows) * f);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = (values[i] - scaling.mean[i % f]) / scaling.std[i % f];
  return out;
}

void denormalize(float* values, int64_t rows, const FeatureScaling& scaling) {
  if (!scaling.active()) return;
  const std::size_t f = scaling.mean.size();
  const std::size_t count = static_cast<std::size_t>(rows) * f;
  for (std::size_t i = 0; i < count; ++i) values[i] = values[i] * scaling.std[i % f] + scaling.mean[i % f];
}

void Normalization::configure(const config::NormalizationSpec& spec, int64_t input_features,
                              int64_t output_features) {
  using config::NormalizationMode;
  FeatureScaling inputs, targets;
  if (spec.inputs.mode == NormalizationMode::kGiven) inputs = given(spec.inputs, "inputs", input_features, spec.file);
  if (spec.targets.mode == NormalizationMode::kGiven) targets = given(spec.targets, "targets", output_features, spec.file);
  spec_ = spec;
  input_features_ = input_features;
  output_features_ = output_features;
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
