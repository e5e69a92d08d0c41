// Per-feature normalization of inputs and targets (config `normalization`, core/config/normalization_spec.h):
// inputs enter the first layer as (x - mean) / std, targets enter the loss as (y - mean) / std, and predictions
// leave as y * std + mean. Every entry point (train_step, evaluate, predict, the inference-only model) applies the
// same functions below once, to the caller's host arrays, before anything else sees them: one place per rank, so
// every layout (and the sequential reference) computes on the same normalized bits.
//
// Statistics are float32 per feature. `auto` computes them in double from the first `samples` samples of the
// global sample stream (the first training call's global batch, replica-major; fewer when that call has fewer):
// mean = sum / n and the population std sqrt(sum((x - mean)^2) / n) (numpy's np.std, ddof 0), both added in
// sample order. A std that is zero or not a normal float32 (a constant feature) becomes 1, so that feature is
// only shifted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/config/normalization_spec.h"

namespace sluice::runtime {

// One side's statistics; empty: this side is not normalized.
struct FeatureScaling {
  std::vector<float> mean;
  std::vector<float> std;
  bool active() const { return !mean.empty(); }
};

// The statistics of `rows` samples [rows][features] as described above (deterministic: sample order, double).
FeatureScaling statistics_of(const float* samples, int64_t rows, int64_t features);

// (x - mean) / std per feature, into a new array; an inactive scaling copies nothing and returns {}.
std::vector<float> normalized(const float* values, int64_t rows, const FeatureScaling& scaling);
// y * std + mean per feature, in place (nothing when inactive).
void denormalize(float* values, int64_t rows, const FeatureScaling& scaling);

// What a trainer (or the inference model) normalizes with: the config's given statistics, auto sides pending
// until computed, or a checkpoint's statistics.
class Normalization {
 public:
  // Given statistics are set, auto sides are pending. Error(kConfig) naming normalization.<side>_mean/_std when a
  // given list's length is not the feature count (the parser checks it too where it knows the output width).
  void configure(const config::NormalizationSpec& spec, int64_t input_features, int64_t output_features);

  const config::NormalizationSpec& spec() const { return spec_; }
  const FeatureScaling& inputs() const { return inputs_; }
  const FeatureScaling& targets() const { return targets_; }
  bool inputs_pending() const { return inputs_pending_; }
  bool targets_pending() const { return targets_pending_; }
  bool pending() const { return inputs_pending_ || targets_pending_; }

  // auto's result, or a checkpoint's statistics (an empty scaling leaves that side as configure() set it).
  void set_inputs(FeatureScaling scaling);
  void set_targets(FeatureScaling scaling);
  // Back to configure()'s state (a checkpoint load starts from it).
  void reset() { configure(spec_, input_features_, output_features_); }

  // Error(kState) when an auto side has no statistics yet; `what` names the call ("sluice_predict").
  void require_ready(const std::string& what) const;

 private:
  config::NormalizationSpec spec_;
  int64_t input_features_ = 0;
  int64_t output_features_ = 0;
  FeatureScaling inputs_;
  FeatureScaling targets_;
  bool inputs_pending_ = false;
  bool targets_pending_ = false;
};

}  // namespace sluice::runtime
